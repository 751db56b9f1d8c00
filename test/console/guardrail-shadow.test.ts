import { expect } from "chai";
import type { Page } from "playwright-core";
import { useSystem } from "../kit/gateway-harness.js";
import { postSpeech } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { expectAccessible, screenshot, useConsole } from "./browser.js";

const MODEL = "railgate/espeak-ng";
const ONLY = "openai/tts-1";

/**
 * A guardrail's shadow in the console, in a real headless Chromium: started from the what-if
 * form's change, its report read as sentences with the API's numbers and a sample one click from
 * its record, promoted, ended, and shown expired.
 */
describe("console: a guardrail's shadow beside its what-if (headless Chromium)", function () {
  this.timeout(180_000);
  const h = useSystem({ embeddedEngine: "auto", enginePoolSize: 1 });
  const c = useConsole(h);
  const { open, row } = c;
  let page: Page;
  let guardrailId: string;
  let workspaceId: string;
  let secret: string;
  const change = { allowed_models: [ONLY] };

  before(async () => {
    page = c.page;
    const key = await h.api.post("/api/v1/keys", { name: "shadow-bot" });
    secret = key.body.key;
    const g = await h.api.post("/api/v1/guardrails", { name: "Shadow guardrail" });
    guardrailId = g.body.data.id;
    workspaceId = g.body.data.workspace_id;
    const assigned = await h.api.post(`/api/v1/guardrails/${guardrailId}/assignments/keys`, {
      key_hashes: [key.body.data.hash],
    });
    expect(assigned.body.assigned_count).to.equal(1);
  });

  const openWhatIf = async () => {
    await open("Guardrails");
    await row("#guardrails-list", "Shadow guardrail")
      .getByRole("button", { name: "What-if on Shadow guardrail" })
      .click();
    await page.locator("#whatif").waitFor({ state: "visible" });
  };
  const sentence = () => page.locator("#shadow-sentence");

  it("starts a shadow from the what-if change, reads its report, opens a sample and promotes it", async () => {
    await openWhatIf();
    await page
      .locator("#shadow-report")
      .filter({ hasText: "No shadow runs on Shadow guardrail." })
      .waitFor();
    await page.getByLabel("Proposed change (the JSON an edit sends)").fill(JSON.stringify(change));
    await page.getByRole("button", { name: "Start a shadow with this change" }).click();
    await sentence().waitFor();
    expect(await sentence().textContent()).to.match(
      /^Since .+, the shadow decided every request as the live guardrail did\.$/,
    );
    expect(await page.locator("#shadow-result").textContent()).to.equal(
      "Shadow started on Shadow guardrail.",
    );

    const res = await postSpeech(h.baseUrl(), secret, {
      model: MODEL,
      voice: "en-us",
      input: "Decided twice, answered once.",
      response_format: "mp3",
    });
    expect(res.status).to.equal(200);
    const id = res.headers.get("x-generation-id");
    const api = await pollUntil(
      () => h.api.get(`/api/v1/guardrails/${guardrailId}/shadow`),
      (r) => r.status !== 200 || r.body.data.outcomes_changed >= 1,
    );
    expect(api.body.data.changes).to.deep.equal([{ live: "allowed", shadow: "refused", count: 1 }]);
    await page.getByRole("button", { name: "Refresh the report" }).click();
    await sentence().filter({ hasText: "differently" }).waitFor();
    expect(await sentence().textContent()).to.match(
      /^Since .+, the shadow decided 1 request differently: 1 request allowed live would have been refused\.$/,
    );
    expect(await page.locator("#shadow-budget-sentence").textContent()).to.equal(
      "Its budget, replayed over the records, changes no outcome.",
    );
    expect(await page.locator("#shadow-report dt").allTextContents()).to.deep.equal([
      "Change",
      "Started",
      "Runs until",
    ]);
    const samples = page
      .getByRole("list", { name: "Shadow's affected requests" })
      .getByRole("link");
    expect(await samples.allTextContents()).to.deep.equal([id]);
    await expectAccessible(page, "guardrail shadow");
    await screenshot(page, "guardrail-shadow");

    await samples.first().click();
    await page.locator("#logs").waitFor({ state: "visible" });
    expect(await page.evaluate("location.hash")).to.equal(`#logs?q=${id}&workspace=${workspaceId}`);
    const logged = page.locator("#logs-list tbody tr");
    await logged.first().waitFor();
    expect(await logged.count()).to.equal(1);

    await openWhatIf();
    await sentence().filter({ hasText: "differently" }).waitFor();
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Promote" }).click();
    await page.locator("#shadow-result").filter({ hasText: "Shadow promoted" }).waitFor();
    const g = await h.api.get(`/api/v1/guardrails/${guardrailId}`);
    expect(g.body.data.allowed_models).to.deep.equal([ONLY]);
    expect(g.body.data.shadow).to.equal(null);
    expect(await page.locator("#shadow-report").textContent()).to.equal(
      "No shadow runs on Shadow guardrail.",
    );
  });

  it("shows an expired shadow as expired and ends it, discarding the change", async () => {
    const soon = new Date(Date.now() + 1000).toISOString();
    const started = await h.api.post(`/api/v1/guardrails/${guardrailId}/shadow`, {
      change: { name: "Renamed in shadow" },
      expires_at: soon,
    });
    expect(started.status).to.equal(201);
    await new Promise((r) => setTimeout(r, 1100));
    await openWhatIf();
    await sentence().waitFor();
    expect(await page.locator("#shadow-report dt").allTextContents()).to.deep.equal([
      "Change",
      "Started",
      "Expired",
    ]);
    expect(await page.locator("#shadow-report dd").last().textContent()).to.match(/^Expired /);
    await expectAccessible(page, "guardrail shadow expired");
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "End (discard the change)" }).click();
    await page.locator("#shadow-result").filter({ hasText: "ended" }).waitFor();
    const g = await h.api.get(`/api/v1/guardrails/${guardrailId}`);
    expect(g.body.data.name).to.equal("Shadow guardrail");
    expect(g.body.data.shadow).to.equal(null);
  });
});
