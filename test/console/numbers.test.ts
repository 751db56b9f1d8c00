import { expect } from "chai";
import type { Page } from "playwright-core";
import { useSystem } from "../kit/gateway-harness.js";
import { postSpeech } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { useConsole } from "./browser.js";

const MODEL = "railgate/espeak-ng";

/**
 * Numbers people can compare, in a real headless Chromium: one money rule everywhere, the spend
 * chart's budget line and its y-axis labels each shown once, the audit log's filter changes in
 * words and keys by name, the playground saying what it redacted, and webhook deliveries that
 * refresh while one is pending.
 */
describe("console numbers and words (headless Chromium)", function () {
  this.timeout(180_000);
  const h = useSystem({ embeddedEngine: "auto", enginePoolSize: 1 });
  const c = useConsole(h);
  const { open } = c;
  let page: Page;
  let secret: string;
  let guardrailId: string;

  before(async () => {
    page = c.page;
    const key = await h.api.post("/api/v1/keys", { name: "numbers-app" });
    secret = key.body.key;
    const g = await h.api.post("/api/v1/guardrails", {
      name: "Mail guard",
      content_filter_builtins: [{ slug: "email", action: "redact" }],
    });
    guardrailId = g.body.data.id;
    const assigned = await h.api.post(`/api/v1/guardrails/${guardrailId}/assignments/keys`, {
      key_hashes: [key.body.data.hash],
    });
    expect(assigned.body.assigned_count).to.equal(1);
    const res = await postSpeech(h.baseUrl(), secret, {
      model: MODEL,
      voice: "en-us",
      input: "Spend a little.",
      response_format: "mp3",
    });
    expect(res.status).to.equal(200);
  });

  it("writes every amount by one rule: cents from $1, four significant digits below", async () => {
    await open("Keys");
    const shown = await page.evaluate(
      `import("/console/lib/format.js").then((f) =>
        [0.010038, 0.000032, 0.00255, 0.5, 0.99996, 1.234, 0, 12345.678].map(f.money))`,
    );
    expect(shown).to.deep.equal([
      "$0.01004",
      "$0.000032",
      "$0.00255",
      "$0.50",
      "$1.00",
      "$1.23",
      "$0.00",
      "$12,345.68",
    ]);
  });

  it("draws a daily budget on the spend chart, with each y-axis label once", async () => {
    const spent = await pollUntil(
      async () =>
        (await h.api.get("/api/v1/usage?granularity=day&group_by=model")).body.data.reduce(
          (a: number, r: { spend_usd: number }) => a + r.spend_usd,
          0,
        ),
      (n: number) => n > 0,
    );
    // A budget near the day's spend (one far above it would flatten the bars and is left out).
    const tiny = await h.api.post("/api/v1/guardrails", {
      name: "tiny-daily",
      limit_usd: Number((spent * 2).toPrecision(2)),
      reset_interval: "daily",
    });
    expect(tiny.status).to.equal(201);
    await open("Dashboard");
    await page.locator("#dashboard").getByRole("button", { name: "Last 7 days" }).click();
    const chart = page.locator("#chart-model canvas");
    await pollUntil(
      async () => (await chart.getAttribute("aria-label")) ?? "",
      (label) => label.includes("Budget tiny-daily"),
    );
    const labels = (await page.evaluate(
      "Chart.getChart(document.querySelector('#chart-model canvas')).scales.y.ticks.map((t) => t.label).filter(Boolean)",
    )) as string[];
    expect(labels.length).to.be.greaterThan(1);
    expect(new Set(labels).size, labels.join(" ")).to.equal(labels.length);
    await h.api.delete(`/api/v1/guardrails/${tiny.body.data.id}`);
  });

  it("shows filter changes in words and keys by name in the audit log", async () => {
    const patched = await h.api.patch(`/api/v1/guardrails/${guardrailId}`, {
      content_filters: [{ pattern: "(?i)forbidden", action: "block", label: null }],
    });
    expect(patched.status).to.equal(200);
    await open("Audit log");
    const form = page.locator("#audit-form");
    await form.getByLabel("Resource").selectOption("guardrail");
    const audit = page.locator("#audit-list");
    const row = audit.locator("tbody tr").filter({ hasText: "blocks /(?i)forbidden/" });
    await pollUntil(
      async () => {
        await form.getByRole("button", { name: "Apply filters" }).click();
        return row.count();
      },
      (n) => n > 0,
    );
    expect(await row.first().textContent()).to.not.include('"pattern"');
    await form.getByLabel("Resource").selectOption("assignment");
    const assigned = audit.locator("tbody tr").filter({ hasText: "numbers-app" });
    await pollUntil(
      async () => {
        await form.getByRole("button", { name: "Apply filters" }).click();
        return assigned.count();
      },
      (n) => n > 0,
    );
  });

  it("says in the playground what was redacted", async () => {
    await open("Speech playground");
    const play = page.locator("#speak-form");
    await play.getByLabel("Standard API key").fill(secret);
    await play.getByLabel("Model").selectOption(MODEL);
    await play.getByLabel("Text").fill("Write to ann@example.com today.");
    await play.getByRole("button", { name: "Speak" }).click();
    await page
      .locator("#speak-redactions")
      .filter({ hasText: "Redacted before speaking: email." })
      .waitFor();
  });

  it("refreshes a webhook's deliveries while one is pending", async () => {
    // Nothing listens on this port: the test event stays pending between retries.
    const hook = await h.api.post("/api/v1/webhooks", {
      url: "http://127.0.0.1:9/unreachable",
      thresholds_pct: [80],
    });
    expect(hook.status).to.equal(201);
    await open("Webhooks");
    const row = c.row("#webhooks-list", "http://127.0.0.1:9/unreachable");
    await row
      .getByRole("button", { name: "Send test event to http://127.0.0.1:9/unreachable" })
      .click();
    await page
      .locator("#deliveries-note")
      .filter({ hasText: /pending/ })
      .waitFor();
    let reads = 0;
    const count = (r: { url(): string }) => {
      if (r.url().includes("/deliveries")) reads += 1;
    };
    page.on("request", count);
    await pollUntil(
      async () => reads,
      (n) => n >= 2,
    );
    page.off("request", count);
    // The event as the receiver gets it, shown on demand.
    await page
      .locator("#deliveries tbody tr")
      .first()
      .getByRole("button", { name: /^Payload of the webhook.test delivery at / })
      .click();
    const payload = JSON.parse((await page.locator("#delivery-payload").textContent()) ?? "");
    expect(payload).to.deep.include({ type: "webhook.test" });
    expect(payload.data).to.have.property("threshold_pct");
    await h.api.delete(`/api/v1/webhooks/${hook.body.data.id}`);
    await open("Keys");
  });
});
