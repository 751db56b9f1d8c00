import { expect } from "chai";
import type { Page } from "playwright-core";
import { useSystem } from "../kit/gateway-harness.js";
import { postSpeech } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { expectAccessible, screenshot, useConsole } from "./browser.js";

const MODEL = "railgate/espeak-ng";
const ONLY = "openai/tts-1";
const CONFLICT = "Failed to load resource: the server responded with a status of 409 (Conflict)";

/**
 * A guardrail policy's history, checks, what-if and shadow in the console, in a real headless
 * Chromium: a model availability policy governing recorded traffic edited twice through the form
 * (the second past a failing check, forced once the failing check is shown), a version restored,
 * the checks run, a what-if of the edit form's change read as a sentence with the API's numbers,
 * and a shadow of it started, reported and promoted past its failing check; a policy mapped from
 * a guardrail says it follows the guardrail instead.
 */
describe("console: a guardrail policy's history, checks, what-if and shadow (headless Chromium)", function () {
  this.timeout(240_000);
  const h = useSystem({ embeddedEngine: "auto", enginePoolSize: 1 });
  const c = useConsole(h);
  const { open, row } = c;
  let page: Page;
  let secret: string;
  let workspaceId: string;
  let policyId: string;
  let guardrailId: string;
  const path = () => `/api/v1/guardrails/policies/model_availability/${policyId}`;
  const check = {
    name: "The local engine may speak",
    request: { model: MODEL },
    expect: "allowed",
  };
  const speak = async (input: string) => {
    const res = await postSpeech(h.baseUrl(), secret, {
      model: MODEL,
      voice: "en-us",
      input,
      response_format: "mp3",
    });
    expect(res.status).to.equal(200);
    return res.headers.get("x-generation-id");
  };

  /** axe at a laptop's and a phone's size, then back to the suite's window. */
  const accessible = async (state: string) => {
    for (const [width, height] of [
      [1366, 768],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await expectAccessible(page, `${state} at ${width}x${height}`);
    }
    await page.setViewportSize({ width: 1440, height: 900 });
  };

  /** Accepts every dialog until `done` settles; answers the messages asked. */
  const confirming = async (done: () => Promise<unknown>) => {
    const asked: string[] = [];
    const answer = (d: { message(): string; accept(): Promise<void> }) => {
      asked.push(d.message());
      void d.accept();
    };
    page.on("dialog", answer);
    try {
      await done();
    } finally {
      page.off("dialog", answer);
    }
    return asked;
  };

  before(async () => {
    page = c.page;
    const key = await h.api.post("/api/v1/keys", { name: "policy-bot" });
    secret = key.body.key;
    workspaceId = key.body.data.workspace_id;
    const created = await h.api.post("/api/v1/guardrails/policies/model_availability", {
      name: "Speech models",
      policy_type: "model_availability",
      workspace_id: workspaceId,
      config: { allowed_models: [MODEL, ONLY] },
      api_key_hashes: [key.body.data.hash],
      checks: [check],
    });
    expect(created.status).to.equal(201);
    policyId = created.body.data.id;
    // Moderation stays on the workspace's guardrails: this one's part shows as a mapped policy.
    const g = await h.api.post("/api/v1/guardrails", {
      name: "Legacy filter",
      content_filter_builtins: [{ slug: "email", action: "redact" }],
    });
    expect(g.status).to.equal(201);
    guardrailId = g.body.data.id;
    await speak("A first request the policy governed.");
    await speak("A second one, later.");
  });

  const openPolicies = async (type: string) => {
    await open("Policies");
    await page.locator("#pol-workspace").selectOption(workspaceId);
    await page.locator("#pol-type").selectOption(type);
  };
  const view = () => page.locator("#policies");
  const versions = () => page.locator("#pol-history-versions tbody tr");

  it("edits a policy twice (forcing past a failing check it shows), diffs and restores a version, and runs the checks", async () => {
    await openPolicies("model_availability");
    await row("#policies-list", "Speech models").waitFor();
    await view().getByRole("button", { name: "History of policy Speech models" }).click();
    await page.locator("#pol-history").waitFor({ state: "visible" });
    await versions().first().waitFor();
    expect(await versions().count()).to.equal(1);
    const checks = page.locator("#pol-history-checks tbody tr");
    expect(await checks.first().textContent()).to.include("The local engine may speak");
    await accessible("policy history");

    // The first edit keeps the check passing.
    await view().getByRole("button", { name: "Edit policy Speech models" }).click();
    await page.locator("#policy-form-h").filter({ hasText: "Edit policy Speech models" }).waitFor();
    expect(await view().getByLabel("Checks (JSON)").inputValue()).to.include(check.name);
    await view().getByLabel("Allowed models").fill(MODEL);
    await view().getByRole("button", { name: "Save" }).click();
    await page.locator("#status").filter({ hasText: "Policy Speech models saved" }).waitFor();
    await versions().nth(1).waitFor();

    // The second fails it: refused, the failing check named, saved once the operator forces it.
    await view().getByRole("button", { name: "Edit policy Speech models" }).click();
    await view().getByLabel("Allowed models").fill(ONLY);
    await view().getByRole("button", { name: "Save" }).click();
    const failing = view().getByRole("list", { name: "Failing checks" }).getByRole("listitem");
    await failing.first().waitFor();
    const named = await failing.allTextContents();
    expect(named).to.have.length(1);
    expect(named[0]).to.match(/^The local engine may speak: expected allowed, got refused/);
    expect(await page.locator("#policy-error").textContent()).to.equal(
      "Not saved: the change fails a check of Speech models.",
    );
    expect(c.errors.splice(0)).to.deep.equal([CONFLICT]);
    expect((await h.api.get(path())).body.data.config.allowed_models).to.deep.equal([MODEL]);
    await accessible("policy save refused by its checks");
    await view()
      .getByRole("button", { name: "Save anyway (forced past the failing checks)" })
      .click();
    await page
      .locator("#status")
      .filter({ hasText: "Policy Speech models saved (forced past failing checks)" })
      .waitFor();
    expect((await h.api.get(path())).body.data.config.allowed_models).to.deep.equal([ONLY]);

    await versions().nth(2).waitFor();
    expect(await versions().nth(0).textContent()).to.include("update (forced)");
    await page.getByRole("button", { name: "Diff of version 2" }).click();
    const diff = page.locator("#pol-history-diff table");
    await diff.waitFor();
    const config = diff.locator("tr").filter({ hasText: "config" }).locator("td");
    expect(await config.allTextContents()).to.deep.equal([
      JSON.stringify({ allowed_models: [MODEL, ONLY] }),
      JSON.stringify({ allowed_models: [MODEL] }),
    ]);
    await accessible("policy history with a diff");
    await screenshot(page, "policy-history");

    const asked = await confirming(async () => {
      await page.getByRole("button", { name: "Restore version 1" }).click();
      await page
        .locator("#pol-history-result")
        .filter({ hasText: "Version 1 restored." })
        .waitFor();
    });
    expect(asked).to.deep.equal([
      "Restore version 1 of Speech models? This makes a new version equal to it.",
    ]);
    await versions().nth(3).waitFor();
    expect(await versions().nth(0).textContent()).to.include("restore of version 1");
    expect((await h.api.get(path())).body.data.config.allowed_models).to.deep.equal([MODEL, ONLY]);

    await page.getByRole("button", { name: "Run checks" }).click();
    await page.locator("#pol-history-result").filter({ hasText: "Every check passed." }).waitFor();
    await checks.first().filter({ hasText: "passed" }).waitFor();
    expect(await page.locator("#pol-history-last-run").textContent()).to.match(/: passed\.$/);
  });

  it("replays the edit form's change as a what-if sentence, then shadows and promotes it", async () => {
    const change = { name: "Speech models", config: { allowed_models: [ONLY] } };
    // The log is written off the hot path: wait until the API replays both requests.
    const api = await pollUntil(
      () => h.api.post(`${path()}/simulate`, { change }),
      (r) => r.status !== 200 || r.body.data.requests_replayed >= 2,
    );
    expect(api.status).to.equal(200);
    const answer = api.body.data;
    const refused = answer.newly_refused.find((r: { reason: string }) => r.reason === "model");
    expect(refused.count).to.equal(2);

    await openPolicies("model_availability");
    await view().getByRole("button", { name: "What-if on policy Speech models" }).click();
    await page.locator("#pol-whatif").waitFor({ state: "visible" });
    // No shadow runs: the policy's own `shadow` says so, with no request that fails.
    await page
      .locator("#pol-shadow-report")
      .filter({ hasText: "No shadow runs on Speech models." })
      .waitFor();
    expect(c.errors.splice(0)).to.deep.equal([]);

    await view().getByRole("button", { name: "Edit policy Speech models" }).click();
    await view().getByLabel("Allowed models").fill(ONLY);
    await view().getByRole("button", { name: "Take the edit form's change" }).click();
    const proposal = view().getByLabel("Proposed change (the JSON a save sends)");
    expect(JSON.parse(await proposal.inputValue())).to.deep.equal(change);
    await view().getByRole("button", { name: "Replay" }).click();
    const sentence = page.locator("#pol-whatif-sentence");
    await sentence.waitFor();
    // The key is named when its spend is the one that falls (the local engine is priced).
    const fell = answer.spend.filter(
      (x: { replayed_usd: number; recorded_usd: number }) => x.replayed_usd < x.recorded_usd,
    );
    expect(fell).to.have.length(1);
    expect(await sentence.textContent()).to.equal(
      `This change would have refused 2 of ${answer.requests_replayed} requests in the window, 2 of them for a model not allowed on key policy-bot.`,
    );
    const samples = page.getByRole("list", { name: "Affected requests" }).getByRole("link");
    expect(await samples.allTextContents()).to.deep.equal(answer.affected_generation_ids);
    expect(await samples.first().getAttribute("href")).to.equal(
      `#logs?q=${answer.affected_generation_ids[0]}&workspace=${workspaceId}`,
    );
    await accessible("policy what-if");
    await screenshot(page, "policy-whatif");

    await view().getByRole("button", { name: "Start a shadow with this change" }).click();
    const shadow = page.locator("#pol-shadow-sentence");
    await shadow.waitFor();
    expect(await shadow.textContent()).to.match(
      /^Since .+, the shadow decided every request as the live policy did\.$/,
    );
    const id = await speak("Decided twice, answered once.");
    const report = await pollUntil(
      () => h.api.get(`${path()}/shadow`),
      (r) => r.status !== 200 || r.body.data.outcomes_changed >= 1,
    );
    expect(report.body.data.changes).to.deep.equal([
      { live: "allowed", shadow: "refused", count: 1 },
    ]);
    await view().getByRole("button", { name: "Refresh the report" }).click();
    await shadow.filter({ hasText: "differently" }).waitFor();
    expect(await shadow.textContent()).to.match(
      /^Since .+, the shadow decided 1 request differently: 1 request allowed live would have been refused\.$/,
    );
    const shadowed = page
      .getByRole("list", { name: "Shadow's affected requests" })
      .getByRole("link");
    expect(await shadowed.allTextContents()).to.deep.equal([id]);
    await accessible("policy shadow");
    await screenshot(page, "policy-shadow");

    // The change fails the policy's check: promote is refused, then forced once confirmed.
    const asked = await confirming(async () => {
      await view().getByRole("button", { name: "Promote" }).click();
      await page
        .locator("#pol-shadow-result")
        .filter({ hasText: "Shadow promoted: Speech models has its change (forced)." })
        .waitFor();
    });
    expect(asked[0]).to.equal(
      "Promote the shadow of Speech models? Its change becomes the policy's.",
    );
    expect(asked[1]).to.match(/^409: .*The local engine may speak: expected allowed, got refused/);
    expect(c.errors.splice(0)).to.deep.equal([CONFLICT]);
    expect((await h.api.get(path())).body.data.config.allowed_models).to.deep.equal([ONLY]);
    expect((await h.api.get(`${path()}/shadow`)).status).to.equal(404);
    expect(await page.locator("#pol-shadow-report").textContent()).to.equal(
      "No shadow runs on Speech models.",
    );
  });

  it("says a budget policy takes no checks, and hides the checks field and Run checks", async () => {
    const budget = await h.api.post("/api/v1/guardrails/policies/budget", {
      name: "Team cap",
      policy_type: "budget",
      workspace_id: workspaceId,
      config: { limit_usd: 5, reset_interval: "daily", include_byok_in_budgets: false },
    });
    expect(budget.status).to.equal(201);
    await openPolicies("budget");
    await row("#policies-list", "Team cap").waitFor();
    await view().getByRole("button", { name: "History of policy Team cap" }).click();
    await versions().first().waitFor();
    expect(await page.locator("#pol-history-checks").textContent()).to.match(
      /^Budget policies take no checks: /,
    );
    expect(await page.getByRole("button", { name: "Run checks" }).count()).to.equal(0);
    await view().getByRole("button", { name: "Edit policy Team cap" }).click();
    await page.locator("#policy-form-h").filter({ hasText: "Edit policy Team cap" }).waitFor();
    expect(await view().getByLabel("Checks (JSON)").isHidden()).to.equal(true);
  });

  it("says a mapped policy follows its guardrail and links to it", async () => {
    await openPolicies("moderation");
    await row("#policies-list", "Legacy filter").waitFor();
    await view().getByRole("button", { name: "History of policy Legacy filter" }).click();
    const follows = page.locator("#pol-follows");
    await follows.waitFor({ state: "visible" });
    expect(await follows.textContent()).to.include(
      "Legacy filter is mapped from guardrail Legacy filter: its history, checks, what-if and shadow are the guardrail's",
    );
    expect(await page.locator("#pol-history").isHidden()).to.equal(true);
    await accessible("mapped policy");
    await follows.getByRole("link", { name: "Legacy filter" }).click();
    await page.locator("#guardrails").waitFor({ state: "visible" });
    expect(await page.evaluate("location.hash")).to.equal(`#guardrails?q=${guardrailId}`);
    await row("#guardrails-list", "Legacy filter").waitFor();
  });
});
