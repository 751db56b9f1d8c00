import { expect } from "chai";
import type { BrowserContext, Locator, Page } from "playwright-core";
import { useSystem } from "../kit/gateway-harness.js";
import { postSpeech } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { MANAGEMENT_KEY } from "../kit/system.js";
import { expectAccessible, launchChromium, recordErrors, screenshot } from "./browser.js";

const MODEL = "railgate/espeak-ng";

/** The list views, each with the table its rows are in. */
const LISTS: [link: string, list: string][] = [
  ["Keys", "#keys-list"],
  ["Logs", "#logs-list"],
  ["Workspaces", "#workspaces-list"],
  ["Guardrails", "#guardrails-list"],
  ["Policies", "#policies-list"],
  ["Webhooks", "#webhooks-list"],
  ["Audit log", "#audit-list"],
];

const SIZES = [
  { width: 1366, height: 768, name: "laptop" },
  { width: 390, height: 844, name: "phone" },
] as const;

/**
 * The console's lists on a laptop and a phone, in a real headless Chromium: every row's name and
 * its main action can be reached without scrolling the page sideways, the name column stays put
 * while a wide table scrolls, secondary columns wait behind a toggle, and axe finds nothing
 * serious on any list, an open record or an explained key.
 */
describe("console tables that fit a laptop and a phone (headless Chromium)", function () {
  this.timeout(240_000);
  const h = useSystem({ embeddedEngine: "auto", enginePoolSize: 1 });
  const errors: string[] = [];
  let context: BrowserContext;
  let browserClose: () => Promise<void>;

  before(async () => {
    // Rows in every list: long names (the widest a name column gets), a guardrail, a webhook,
    // a workspace and requests (the log and the audit log fill from them).
    const ws = await h.api.post("/api/v1/workspaces", { name: "Support team", slug: "support" });
    expect(ws.status).to.equal(201);
    const key = await h.api.post("/api/v1/keys", {
      name: "support-chatbot-production-eu-west",
      limit: 5,
      limit_reset: "daily",
    });
    expect(key.status).to.equal(201);
    for (const name of ["ci-bot", "nightly-batch-reader"]) {
      expect((await h.api.post("/api/v1/keys", { name })).status).to.equal(201);
    }
    const g = await h.api.post("/api/v1/guardrails", {
      name: "support-daily",
      limit_usd: 1.5,
      reset_interval: "daily",
      content_filter_builtins: [{ slug: "email", action: "redact" }],
    });
    expect(g.status).to.equal(201);
    const hook = await h.api.post("/api/v1/webhooks", {
      url: "https://alerts.example.com/railgate/budget-alerts/support-team",
      thresholds_pct: [50, 80, 100],
    });
    expect(hook.status).to.equal(201);
    for (const input of ["Hello from a laptop.", "Mail ann@example.com please."]) {
      const res = await postSpeech(h.baseUrl(), key.body.key, {
        model: MODEL,
        voice: "en-us",
        input,
        response_format: "mp3",
      });
      expect(res.status).to.equal(200);
    }
    await pollUntil(
      async () => (await h.api.get(`/api/v1/generations?key_hash=${key.body.data.hash}`)).body.data,
      (data) => data.length === 2,
    );
    const browser = await launchChromium();
    browserClose = () => browser.close();
    context = await browser.newContext({ locale: "en-US" });
  });
  after(async () => {
    await browserClose?.();
  });
  afterEach(function () {
    if (this.currentTest?.state === "passed") expect(errors.splice(0)).to.deep.equal([]);
  });

  async function signedIn(size: (typeof SIZES)[number]): Promise<Page> {
    const page = await context.newPage();
    recordErrors(page, errors);
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.goto(`${h.baseUrl()}/console`);
    await page.getByLabel("Management key").fill(MANAGEMENT_KEY);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator("#admin").waitFor({ state: "visible" });
    return page;
  }

  async function open(page: Page, view: string): Promise<void> {
    const link = page
      .getByRole("navigation", { name: "Sections" })
      .getByRole("link", { name: view, exact: true });
    await link.click();
    await link.and(page.locator('[aria-current="page"]')).waitFor();
  }

  /**
   * Where `target` is once scrolled into view. A list drawn again while it is measured (a view
   * reads its list when shown) detaches the row found first: it is found and measured again.
   */
  async function boxOf(target: Locator) {
    return pollUntil(
      async () => {
        try {
          await target.scrollIntoViewIfNeeded({ timeout: 2000 });
          return await target.boundingBox({ timeout: 2000 });
        } catch {
          return null;
        }
      },
      (box) => box !== null,
      20,
    );
  }

  /** Whether `box` lies inside the window, left to right and top to bottom. */
  function inside(
    box: { x: number; y: number; width: number; height: number } | null,
    size: { width: number; height: number },
  ): boolean {
    return (
      box !== null &&
      box.x >= 0 &&
      box.y >= 0 &&
      box.x + box.width <= size.width + 0.5 &&
      box.y + box.height <= size.height + 0.5
    );
  }

  for (const size of SIZES) {
    it(`shows every row's name and main action inside a ${size.width}x${size.height} window, accessible`, async () => {
      const page = await signedIn(size);
      for (const [link, list] of LISTS) {
        await open(page, link);
        const rows = page.locator(`${list} tbody tr`);
        await rows.first().waitFor();
        // The view reads its list again when shown: measured once that is drawn.
        await page.waitForLoadState("networkidle");
        const n = Math.min(await rows.count(), 8);
        expect(n, link).to.be.greaterThan(0);
        for (let i = 0; i < n; i++) {
          const row = rows.nth(i);
          const name = row.locator("td.name");
          const nameBox = await boxOf(name);
          expect(inside(nameBox, size), `${link} row ${i} name at ${JSON.stringify(nameBox)}`).to.be
            .true;
          const actions = row.locator("td.row-actions button");
          if (link !== "Audit log") {
            // The audit log is a record: its rows have nothing to act on.
            const box = await boxOf(actions.first());
            expect(inside(box, size), `${link} row ${i} action at ${JSON.stringify(box)}`).to.be
              .true;
          }
        }
        // Nothing on the page itself is wider than the window.
        const overflow = await page.evaluate(
          "document.documentElement.scrollWidth - document.documentElement.clientWidth",
        );
        expect(overflow, `${link}: the page scrolls sideways`).to.be.at.most(0);
        await expectAccessible(page, `${link} at ${size.width} px`);
        await page.evaluate("window.scrollTo(0, 0)");
        await screenshot(page, `${link.toLowerCase().replace(/ /g, "-")}-${size.name}`, false);
      }

      // The views that are not lists, as they open.
      for (const [link, ready] of [
        ["Dashboard", "#dashboard-stats .stat"],
        ["Credits", "#credits-out .stat"],
        ["Speech playground", "#p-voice option"],
      ] as const) {
        await open(page, link);
        await page.locator(ready).first().waitFor({ state: "attached" });
        await page.waitForLoadState("networkidle");
        await expectAccessible(page, `${link} at ${size.width} px`);
      }

      // An open record and an explained key: their tables scroll, and take focus to do so.
      await open(page, "Logs");
      await page
        .locator("#logs-list tbody tr")
        .first()
        .getByRole("button", { name: /^Details of the request at / })
        .click();
      await page.locator("#log-detail").waitFor({ state: "visible" });
      await expectAccessible(page, `an open record at ${size.width} px`);
      await open(page, "Explain a key");
      await page.getByLabel("Key name or hash").fill("support-chatbot-production-eu-west");
      await page.getByRole("button", { name: "Explain", exact: true }).click();
      await page
        .locator("#explain-view")
        .getByRole("heading", { name: "Key support-chatbot-production-eu-west" })
        .waitFor();
      await expectAccessible(page, `an explained key at ${size.width} px`);
      await page.close();
    });
  }

  it("keeps the name column in view while a wide table scrolls, says that it scrolls, and hides secondary columns behind a toggle", async () => {
    const page = await signedIn(SIZES[0]);
    await open(page, "Keys");
    const list = page.locator("#keys-list");
    const wide = list.locator(".table-scroll");
    await list.locator("tbody tr").first().waitFor();
    // Hash, label, kind and created wait behind "Columns": the table is narrower without them.
    expect(await list.locator("thead th").allInnerTexts()).to.not.include("HASH");
    const toggle = list.locator(".columns-toggle");
    await toggle.locator("summary").click();
    for (const column of ["Hash", "Label", "Kind", "Created"]) {
      await toggle.getByLabel(column).check();
    }
    await list.locator("thead th", { hasText: "Hash" }).waitFor();
    // More columns than the card is wide: a shadow and a hint say so, and the box scrolls.
    await pollUntil(
      () => wide.getAttribute("class"),
      (cls) => (cls ?? "").includes("more-right"),
    );
    await list.getByText("More columns to the right →").waitFor();
    const name = list.locator("tbody tr").first().locator("td.name");
    const before = await name.boundingBox();
    await wide.evaluate((box) => {
      box.scrollLeft = box.scrollWidth;
    });
    await pollUntil(
      () => wide.getAttribute("class"),
      (cls) => (cls ?? "").includes("more-left"),
    );
    const after = await name.boundingBox();
    expect(after?.x).to.be.closeTo(before?.x ?? -1, 1);
    // The choice of columns outlives a reload.
    await page.reload();
    await page.locator("#keys-list tbody tr").first().waitFor();
    await page.locator("#keys-list thead th", { hasText: "Hash" }).waitFor();
    for (const column of ["Hash", "Label", "Kind", "Created"]) {
      await page.locator("#keys-list .columns-toggle summary").click();
      await page.locator("#keys-list .columns-toggle").getByLabel(column).uncheck();
      await page.locator("#keys-list .columns-toggle summary").click();
    }
    // Amounts line up on the right, to compare at a glance.
    const align = await page.evaluate(
      "getComputedStyle(document.querySelector('#keys-list tbody tr td.num')).textAlign",
    );
    expect(align).to.equal("right");
    await page.close();
  });
});
