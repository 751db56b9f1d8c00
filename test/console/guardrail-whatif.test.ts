import { expect } from "chai";
import type { Page } from "playwright-core";
import { useSystem } from "../kit/gateway-harness.js";
import { postSpeech } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { expectAccessible, screenshot, useConsole } from "./browser.js";

const MODEL = "railgate/espeak-ng";

/**
 * A guardrail's what-if in the console, in a real headless Chromium: a proposed budget replayed
 * over requests the test made, the answer read as a sentence whose numbers are the API's, the
 * edit form's change taken as the proposal, and a sample record one click away in the log.
 */
describe("console: a guardrail's what-if replay (headless Chromium)", function () {
  this.timeout(180_000);
  const h = useSystem({ embeddedEngine: "auto", enginePoolSize: 1 });
  const c = useConsole(h);
  const { open, row } = c;
  let page: Page;
  let guardrailId: string;
  let workspaceId: string;
  const change = { limit_usd: 0.0000001, reset_interval: "daily" };

  before(async () => {
    page = c.page;
    const key = await h.api.post("/api/v1/keys", { name: "support-bot" });
    const g = await h.api.post("/api/v1/guardrails", { name: "What-if guardrail" });
    guardrailId = g.body.data.id;
    workspaceId = g.body.data.workspace_id;
    const assigned = await h.api.post(`/api/v1/guardrails/${guardrailId}/assignments/keys`, {
      key_hashes: [key.body.data.hash],
    });
    expect(assigned.body.assigned_count).to.equal(1);
    for (const input of ["A first request to replay.", "A second one, later."]) {
      const res = await postSpeech(h.baseUrl(), key.body.key, {
        model: MODEL,
        voice: "en-us",
        input,
        response_format: "mp3",
      });
      expect(res.status).to.equal(200);
    }
  });

  it("reads the replay's answer as a sentence with the API's numbers and links a sample to its record", async () => {
    // The log is written off the hot path: wait until the API replays both requests.
    const api = await pollUntil(
      () => h.api.post(`/api/v1/guardrails/${guardrailId}/simulate`, { change }),
      (r) => r.status !== 200 || r.body.data.requests_replayed >= 2,
    );
    expect(api.status).to.equal(200);
    const answer = api.body.data;
    const refused = answer.newly_refused.find((r: { reason: string }) => r.reason === "budget");
    expect(refused.count).to.be.above(0);

    await open("Guardrails");
    await row("#guardrails-list", "What-if guardrail")
      .getByRole("button", { name: "What-if on What-if guardrail" })
      .click();
    await page.locator("#whatif").waitFor({ state: "visible" });
    // A bad change is refused in the API's words beside the form.
    await page.getByLabel("Proposed change (the JSON an edit sends)").fill('{"limit_usd": -1}');
    await page.getByRole("button", { name: "Replay" }).click();
    await page
      .locator("#whatif-error")
      .filter({ hasText: /^400: .*limit_usd/ })
      .waitFor();
    expect(c.errors.splice(0)).to.deep.equal([
      "Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ]);

    // The edit form's change becomes the proposal.
    await row("#guardrails-list", "What-if guardrail")
      .getByRole("button", { name: "Edit What-if guardrail" })
      .click();
    await page.locator("#g-limit").fill("2");
    await page.locator("#g-reset").selectOption("weekly");
    await page.getByRole("button", { name: "Take the edit form's change" }).click();
    expect(JSON.parse(await page.locator("#whatif-change").inputValue())).to.deep.equal({
      limit_usd: 2,
      reset_interval: "weekly",
    });

    await page.getByLabel("Proposed change (the JSON an edit sends)").fill(JSON.stringify(change));
    await page.getByRole("button", { name: "Replay" }).click();
    const sentence = page.locator("#whatif-sentence");
    await sentence.waitFor();
    expect(await sentence.textContent()).to.equal(
      `This change would have refused ${refused.count} of ${answer.requests_replayed} requests in the window, ${refused.count} of them for budget on key support-bot.`,
    );
    const spend = page.locator("#whatif-answer tbody tr");
    expect(await spend.count()).to.equal(answer.spend.length);
    expect(await spend.first().textContent()).to.include("support-bot");
    const samples = page.getByRole("list", { name: "Affected requests" }).getByRole("link");
    expect(await samples.allTextContents()).to.deep.equal(answer.affected_generation_ids);
    await expectAccessible(page, "guardrail what-if");
    await screenshot(page, "guardrail-whatif");

    const first = answer.affected_generation_ids[0];
    await samples.first().click();
    await page.locator("#logs").waitFor({ state: "visible" });
    const logged = page.locator("#logs-list tbody tr");
    await logged.first().waitFor();
    expect(await logged.count()).to.equal(1);
    expect(await logged.first().textContent()).to.include("support-bot");
    expect(await page.evaluate("location.hash")).to.equal(
      `#logs?q=${first}&workspace=${workspaceId}`,
    );
  });
});
