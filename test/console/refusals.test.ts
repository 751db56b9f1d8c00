import { expect } from "chai";
import type { Page } from "playwright-core";
import { useSystem } from "../kit/gateway-harness.js";
import { postSpeech } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { expectAccessible, useConsole } from "./browser.js";

const MODEL = "railgate/espeak-ng";

/**
 * Refusals as an operator reads them, in a real headless Chromium: a budget refusal's record in
 * words with its figures (never "no guardrail acted" beside the guardrail that refused), the
 * log's refusal-reason filter, and the dashboard's refusals by reason.
 */
describe("console: refusals in words, filtered and counted (headless Chromium)", function () {
  this.timeout(180_000);
  const h = useSystem({ embeddedEngine: "auto", enginePoolSize: 1 });
  const c = useConsole(h);
  let page: Page;
  let secret: string;
  let hash: string;

  before(async () => {
    page = c.page;
    const made = await h.api.post("/api/v1/keys", { name: "budget-app" });
    expect(made.status).to.equal(201);
    secret = made.body.key;
    hash = made.body.data.hash;
    const daily = await h.api.post("/api/v1/guardrails", {
      name: "support-daily",
      limit_usd: 0,
      reset_interval: "daily",
    });
    expect(daily.status, JSON.stringify(daily.body)).to.equal(201);
    const assigned = await h.api.post(`/api/v1/guardrails/${daily.body.data.id}/assignments/keys`, {
      key_hashes: [hash],
    });
    expect(assigned.body.assigned_count).to.equal(1);
    const res = await postSpeech(h.baseUrl(), secret, {
      model: MODEL,
      voice: "en-us",
      input: "Over budget already.",
    });
    expect(res.status).to.equal(403);
    await pollUntil(
      async () => (await h.api.get(`/api/v1/generations?key_hash=${hash}`)).body.data,
      (data) => data.length === 1,
    );
  });

  it("filters the log by refusal reason and reads a budget refusal in words with its figures", async () => {
    await c.open("Logs");
    const filters = page.locator("#logs-form");
    await filters.getByLabel("Key").selectOption({ label: "budget-app" });
    await filters.getByLabel("Refusal reason").selectOption({ label: "Rate limit" });
    await filters.getByRole("button", { name: "Apply filters" }).click();
    const logs = page.locator("#logs-list");
    await logs.getByText(/^No requests/).waitFor();
    await filters.getByLabel("Refusal reason").selectOption({ label: "Budget used up" });
    await filters.getByRole("button", { name: "Apply filters" }).click();
    const row = c.row("#logs-list", "budget-app");
    await row.first().waitFor();
    expect(await logs.locator("tbody tr").count()).to.equal(1);
    await row
      .first()
      .getByRole("button", { name: /^Details of the request at / })
      .click();
    const detail = page.locator("#log-detail");
    await detail.waitFor({ state: "visible" });
    const facts = (await detail.locator("dl.facts").allInnerTexts()).join("\n");
    expect(facts).to.match(
      /Refused because\nDaily budget of guardrail support-daily used up: \$0 of \$0 spent \(this API key\); this request could cost up to \$0\.\d+/,
    );
    expect(facts).to.include("Deciding guardrail\nsupport-daily");
    const text = ((await detail.textContent()) ?? "").toLowerCase();
    expect(text).to.not.include("no guardrail acted");
    await detail
      .getByText("No content filter acted on this request (its refusal is under Request).")
      .waitFor();
    await expectAccessible(page, "logs (a refused record open)");
    await detail.getByRole("button", { name: "Close details" }).click();
    await filters.getByRole("button", { name: "Clear" }).click();
  });

  it("counts refusals by reason on the dashboard beside blocked, redacted and flagged", async () => {
    await c.open("Dashboard");
    await page.locator("#dashboard").getByRole("button", { name: "Last 7 days" }).click();
    const stats = page.locator("#dashboard-stats .stat");
    await stats.first().waitFor();
    const cards = await pollUntil(
      () => stats.allInnerTexts(),
      (texts) => texts.some((t) => /^Refused\n[1-9]/.test(t)),
    );
    expect(cards.some((t) => /^Refused\n[1-9]/.test(t))).to.equal(true);
    const byReason = page.getByRole("region", { name: "Refusals by reason" });
    await byReason.waitFor();
    const pairs = (await byReason.locator("dt, dd").allTextContents()).join("|");
    expect(pairs).to.match(/Budget used up\|[1-9]/);
    await expectAccessible(page, "dashboard (refusals)");
  });
});
