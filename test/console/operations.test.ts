import { expect } from "chai";
import type { Page } from "playwright-core";
import { useSystem } from "../kit/gateway-harness.js";
import { postSpeech } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { MANAGEMENT_KEY } from "../kit/system.js";
import { expectAccessible, recordErrors, screenshot, usd, useConsole } from "./browser.js";

const MODEL = "railgate/espeak-ng";

/**
 * What happened, in a real headless Chromium against the whole system with real speech: the
 * request log by key name with its filters and a request's details, the dashboard's charts from
 * the usage series, the audit log paged by cursor and the credit history; then every view
 * screenshotted (test-artifacts/console/) and checked by axe-core.
 */
describe("console: request log, dashboard, audit log, every view (headless Chromium)", function () {
  // A browser driving a page is slow on a loaded CI machine: a longer limit, not a timed assertion.
  this.timeout(180_000);
  const h = useSystem({ embeddedEngine: "auto", enginePoolSize: 1 });
  const c = useConsole(h);
  const { errors, open } = c;
  let page: Page;
  before(async () => {
    page = c.page;
    // A credited workspace (the credit history) and more key writes than an audit page holds.
    const team = await h.api.post("/api/v1/workspaces", { name: "Team A", slug: "team-a" });
    expect(team.status).to.equal(201);
    const credited = await h.api.post(`/api/v1/workspaces/${team.body.data.id}/credits`, {
      amount_usd: 10,
    });
    expect(credited.status).to.equal(200);
    for (let i = 0; i < 30; i++) {
      const made = await h.api.post("/api/v1/keys", { name: `bulk-${String(i).padStart(2, "0")}` });
      expect(made.status).to.equal(201);
    }
  });

  it("lists requests by key name, filters them by key, status and guardrail outcome, and opens one", async () => {
    const made = await h.api.post("/api/v1/keys", { name: "log-app" });
    expect(made.status).to.equal(201);
    const secret: string = made.body.key;
    const hash: string = made.body.data.hash;
    const shield = await h.api.post("/api/v1/guardrails", {
      name: "Mail shield",
      content_filter_builtins: [{ slug: "email", action: "redact" }],
      content_filters: [{ pattern: "(?i)forbidden", action: "block", label: null }],
    });
    expect(shield.status).to.equal(201);
    const assigned = await h.api.post(
      `/api/v1/guardrails/${shield.body.data.id}/assignments/keys`,
      {
        key_hashes: [hash],
      },
    );
    expect(assigned.body.assigned_count).to.equal(1);
    // The second one carries a trace: the details show it.
    const trace = { trace_id: "console-trace-1", span_name: "checkout" };
    for (const [input, status] of [
      ["Hello from the request log.", 200],
      ["Write to ann@example.com today.", 200],
      ["This is forbidden talk.", 403],
    ] as const) {
      const res = await postSpeech(h.baseUrl(), secret, {
        model: MODEL,
        voice: "en-us",
        input,
        response_format: "mp3",
        ...(input.includes("@") ? { trace } : {}),
      });
      expect(res.status, input).to.equal(status);
    }
    // The records are written off the hot path: asked again until all three are in.
    const records = await pollUntil(
      async () => (await h.api.get(`/api/v1/generations?key_hash=${hash}`)).body.data,
      (data) => data.length === 3,
    );
    expect(records.map((r: { status: string }) => r.status)).to.deep.equal([
      "refused",
      "completed",
      "completed",
    ]);

    await open("Logs");
    const logs = page.locator("#logs-list");
    const filters = page.locator("#logs-form");
    await filters.getByLabel("Key").selectOption({ label: "log-app" });
    await filters.getByRole("button", { name: "Apply filters" }).click();
    // The API's total when it says one, else the rows shown: never a page passed off as a total.
    await logs.getByText(/^3 shown/).waitFor();
    // Newest first, each row by the key's name, money and milliseconds for people.
    const first = logs.locator("tbody tr").nth(2);
    const served = records[2];
    expect(await first.getByRole("cell").allInnerTexts()).to.include.members([
      "log-app",
      MODEL,
      "completed",
      usd(served.cost_usd),
      "none",
    ]);

    await filters.getByLabel("Guardrail outcome").selectOption("redacted");
    await filters.getByRole("button", { name: "Apply filters" }).click();
    await logs.getByText(/^1 shown/).waitFor();
    const redacted = logs.locator("tbody tr").first();
    await redacted
      .getByRole("cell", { name: "email redacted (Mail shield)", exact: true })
      .waitFor();
    await redacted.getByRole("button", { name: /^Details of the request at / }).click();
    const detail = page.locator("#log-detail");
    await detail.waitFor({ state: "visible" });
    const record = records[1];
    expect(await detail.getByRole("heading", { level: 3 }).textContent()).to.equal(
      `Request ${record.id}`,
    );
    const facts = await detail.locator("dl.facts").allInnerTexts();
    expect(facts.join("\n"))
      .to.include(`Key\nlog-app`)
      .and.include(`Cost\n${usd(record.cost_usd)}`);
    await detail.getByRole("cell", { name: "Mail shield" }).waitFor();
    await detail.getByRole("cell", { name: "redacted" }).waitFor();
    const traceFacts = await detail
      .getByRole("region", { name: "Trace" })
      .locator("dt, dd")
      .allTextContents();
    expect(traceFacts).to.deep.equal(["trace_id", "console-trace-1", "span_name", "checkout"]);
    // The window made as tall as the view, so the sidebar stands as it does on a screen.
    await page.setViewportSize({ width: 1440, height: 1200 });
    await screenshot(page, "logs-detail", false);
    await page.setViewportSize({ width: 1440, height: 900 });
    await detail.getByRole("button", { name: "Close details" }).click();

    await filters.getByLabel("Guardrail outcome").selectOption("");
    await filters.getByLabel("Status").selectOption("refused");
    await filters.getByRole("button", { name: "Apply filters" }).click();
    await logs.getByText(/^1 shown/).waitFor();
    await logs
      .locator("tbody tr")
      .first()
      .getByRole("cell", { name: /refused by Mail shield/ })
      .waitFor();
    await filters.getByRole("button", { name: "Clear" }).click();

    // Signed in, the playground looks a generation up with the management key when no
    // standard key is typed.
    await open("Speech playground");
    expect(await page.getByLabel("Standard API key").inputValue()).to.equal("");
    await page.getByLabel(/Generation id/).fill(record.id);
    await page.getByRole("button", { name: "Look up" }).click();
    await page.locator("#generation-out").filter({ hasText: record.id }).waitFor();
    const shown = JSON.parse((await page.locator("#generation-out").textContent()) ?? "");
    expect(shown.data).to.deep.include({ id: record.id, key_hash: hash, status: "completed" });
  });

  it("draws the dashboard from the usage series: totals and charts by model, key and status", async () => {
    // The range "Last 7 days" shows: six UTC days back to today.
    const weekStart = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
    const series = (group: string) =>
      h.api
        .get(`/api/v1/usage?granularity=day&group_by=${group}&from=${weekStart}`)
        .then((r) => r.body.data);
    const byKey = await series("key");
    const logApp = byKey.find((r: { label: string }) => r.label === "log-app");
    expect(logApp.requests).to.equal(3);
    const byModel = await series("model");
    const spend = byModel.reduce((a: number, r: { spend_usd: number }) => a + r.spend_usd, 0);
    const requests = byModel.reduce((a: number, r: { requests: number }) => a + r.requests, 0);

    await open("Dashboard");
    await page.locator("#dashboard").getByRole("button", { name: "Last 7 days" }).click();
    const stats = page.locator("#dashboard-stats .stat");
    await stats.first().waitFor();
    // The click draws the cards again (the range's series are fetched first): read them once
    // drawn. A card read while it is replaced is not rendered, and its innerText has no line
    // break (seen once in CI on a loaded machine: "Spend$0.00139").
    const wanted = [
      `Spend\n${usd(spend)}`,
      `Requests\n${new Intl.NumberFormat("en-US").format(requests)}`,
    ];
    const cards = await pollUntil(
      () => stats.allInnerTexts(),
      (texts) => wanted.every((w) => texts.includes(w)),
    );
    expect(cards).to.include.members(wanted);
    // Each chart is a canvas named by what it shows, with the figures in a table beside it.
    const keyChart = page.locator("#chart-key canvas");
    expect(await keyChart.getAttribute("aria-label")).to.include(
      `log-app ${usd(logApp.spend_usd)}`,
    );
    expect(await page.locator("#chart-model canvas").getAttribute("aria-label")).to.include(MODEL);
    // The run's database is shared by every suite of the process: the figures are the API's.
    const refused = (await series("status"))
      .filter((r: { group: string }) => r.group === "refused")
      .reduce((n: number, r: { requests: number }) => n + r.requests, 0);
    expect(refused).to.be.greaterThan(0);
    expect(await page.locator("#chart-status canvas").getAttribute("aria-label")).to.include(
      `refused ${new Intl.NumberFormat("en-US").format(refused)}`,
    );

    expect(await page.locator("#chart-ttfb canvas").getAttribute("aria-label")).to.match(/ p95 \d/);
    const drawn = await page.evaluate(
      "[...document.querySelectorAll('#dashboard canvas')].map((c) => c.width > 0 && c.height > 0)",
    );
    expect(drawn).to.deep.equal([true, true, true, true]);
  });

  it("lists the audit log by name, filters it, and shows the credit history", async () => {
    await open("Audit log");
    const audit = page.locator("#audit-list");
    const form = page.locator("#audit-form");
    await form.getByLabel("Resource").selectOption("key");
    await form.getByLabel("Action").fill("key.create");
    // Written off the hot path: asked again until the event is in.
    const created = await pollUntil(
      async () => {
        await form.getByRole("button", { name: "Apply filters" }).click();
        return audit.locator("tbody tr").filter({ hasText: "key log-app" }).count();
      },
      (n) => n > 0,
    );
    expect(created).to.equal(1);
    const eventRow = audit.locator("tbody tr").filter({ hasText: "key log-app" });
    const cells = await eventRow.getByRole("cell").allInnerTexts();
    expect(cells).to.include.members(["key.create", "key log-app"]);
    const management = (await h.api.get("/api/v1/keys?limit=100")).body.data.find(
      (k: { kind: string }) => k.kind === "management",
    );
    expect(cells).to.include(management.name);
    expect(cells.join(" ")).to.include("name: log-app");

    // Paged by the API's cursor: the second page is the API's second page, and back again.
    const apiFirst = (
      await h.api.get("/api/v1/audit-log?resource_type=key&action=key.create&limit=25")
    ).body;
    expect(apiFirst.next_cursor).to.be.a("string");
    const apiSecond = (
      await h.api.get(
        `/api/v1/audit-log?resource_type=key&action=key.create&limit=25&cursor=${encodeURIComponent(apiFirst.next_cursor)}`,
      )
    ).body.data;
    const requestIds = () => audit.locator("tbody tr td:last-child").allTextContents();
    await audit.getByRole("button", { name: "Next page of audit events" }).click();
    await audit.getByText("Page 2", { exact: true }).waitFor();
    expect(await requestIds()).to.deep.equal(
      apiSecond.map((e: { request_id: string }) => e.request_id),
    );
    await audit.getByRole("button", { name: "Previous page of audit events" }).click();
    await audit.getByText("Page 1", { exact: true }).waitFor();
    expect(await requestIds()).to.deep.equal(
      apiFirst.data.map((e: { request_id: string }) => e.request_id),
    );

    await open("Credits");
    const history = page.locator("#credits-history");
    await history.getByRole("cell", { name: "Team A", exact: true }).waitFor();
    expect(
      await history.locator("tbody tr").first().getByRole("cell").allInnerTexts(),
    ).to.include.members(["Team A", usd(10)]);
  });

  it("shows every view in one designed layout, accessible (axe) and without a browser error", async () => {
    // What each view shows once its data is in.
    const views: [string, string, string][] = [
      ["Dashboard", "dashboard", "#chart-ttfb canvas"],
      ["Logs", "logs", "#logs-list table"],
      ["Keys", "keys", "#keys-list table"],
      ["Workspaces", "workspaces", "#workspaces-list table"],
      ["Credits", "credits", "#credits-history table"],
      ["Guardrails", "guardrails", "#guardrails-list table"],
      ["Policies", "policies", "#policies-list .data-table"],
      ["Audit log", "audit", "#audit-list table"],
      ["Webhooks", "webhooks", "#webhooks-list .data-table"],
      ["Speech playground", "playground", "#p-voice option"],
    ];
    for (const [link, name, ready] of views) {
      await open(link);
      await page.locator(ready).first().waitFor({ state: "attached" });
      expect(await page.locator(".view:not([hidden])").getAttribute("id")).to.equal(name);
      await screenshot(page, name);
      await expectAccessible(page, name);
    }
    await open("Explain a key");
    const key = (await h.api.get("/api/v1/keys?limit=1")).body.data[0];
    await page.getByLabel("Key name or hash").fill(key.hash);
    await page.getByRole("button", { name: "Explain", exact: true }).click();
    await page
      .locator("#explain-view")
      .getByRole("heading", { name: `Key ${key.name}` })
      .waitFor();
    await screenshot(page, "explain");
    await expectAccessible(page, "explain");

    // Signed out: the sign-in card; and the layout on a phone-sized screen.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await screenshot(page, "signin");
    await expectAccessible(page, "signin");
    const phone = await c.context.newPage();
    recordErrors(phone, errors);
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${h.baseUrl()}/console`);
    await phone.getByLabel("Management key").fill(MANAGEMENT_KEY);
    await phone.getByRole("button", { name: "Sign in" }).click();
    await phone.locator("#dashboard-stats .stat").first().waitFor();
    await screenshot(phone, "dashboard-narrow");
    await expectAccessible(phone, "dashboard-narrow");
    await phone.close();
    expect(errors).to.deep.equal([]);
  });
});
