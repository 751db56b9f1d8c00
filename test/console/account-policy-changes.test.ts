import { expect } from "chai";
import type { Page } from "playwright-core";
import { useSystem } from "../kit/gateway-harness.js";
import { postSpeech } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { expectAccessible, screenshot, useConsole } from "./browser.js";

const MODEL = "railgate/espeak-ng";
const ONLY = "openai/tts-1";
const ACCOUNT = "/api/v1/guardrails/policies/account";
const CONFLICT = "Failed to load resource: the server responded with a status of 409 (Conflict)";

/**
 * A workspace-wide (account) policy's history, checks, what-if and shadow in the console, in a
 * real headless Chromium, on the panels a workspace policy has: a model availability policy
 * covering the workspace of recorded traffic, changed once through the API, its two versions
 * diffed and one restored, a what-if read as a sentence with the API's numbers, and a shadow
 * started through the API reported with the workspaces it counts and promoted from the console.
 */
describe("console: a workspace-wide policy's history, what-if and shadow (headless Chromium)", function () {
  this.timeout(240_000);
  const h = useSystem({ embeddedEngine: "auto", enginePoolSize: 1 });
  const c = useConsole(h);
  const { open, row } = c;
  let page: Page;
  let secret: string;
  let workspaceId: string;
  let policyId: string;
  const path = () => `${ACCOUNT}/${policyId}`;
  /** The policy as the account list answers it: it has no GET of its own. */
  const listed = async () => {
    const res = await h.api.get(`${ACCOUNT}?policy_type=model_availability`);
    expect(res.status).to.equal(200);
    return res.body.data.find((p: { id: string }) => p.id === policyId);
  };
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
    const key = await h.api.post("/api/v1/keys", { name: "org-bot" });
    secret = key.body.key;
    workspaceId = key.body.data.workspace_id;
    const created = await h.api.post(ACCOUNT, {
      name: "Org speech models",
      policy_type: "model_availability",
      config: { allowed_models: [MODEL, ONLY] },
      workspace_ids: [workspaceId],
      checks: [check],
    });
    expect(created.status).to.equal(201);
    policyId = created.body.data.id;
    const changed = await h.api.request("PUT", path(), {
      name: "Org speech models",
      config: { allowed_models: [MODEL] },
    });
    expect(changed.status).to.equal(200);
    await speak("A first request the workspace-wide policy governed.");
    await speak("A second one, later.");
  });

  const openPolicies = async () => {
    await open("Policies");
    await page.locator("#pol-workspace").selectOption(workspaceId);
    await page.locator("#pol-type").selectOption("model_availability");
    await row("#account-policies-list", "Org speech models").waitFor();
  };
  const view = () => page.locator("#policies");
  const versions = () => page.locator("#pol-history-versions tbody tr");

  it("shows its two versions with a diff, restores one, and runs its checks", async () => {
    await openPolicies();
    await view()
      .getByRole("button", { name: "History of workspace-wide policy Org speech models" })
      .click();
    await page
      .locator("#pol-history-h")
      .filter({ hasText: "History and checks of Org speech models" })
      .waitFor();
    await versions().nth(1).waitFor();
    expect(await versions().count()).to.equal(2);
    expect(await versions().nth(0).textContent()).to.include("update");
    expect(await versions().nth(1).textContent()).to.include("create");
    expect(await page.locator("#pol-history-checks tbody tr").first().textContent()).to.include(
      check.name,
    );

    await page.getByRole("button", { name: "Diff of version 2" }).click();
    const diff = page.locator("#pol-history-diff table");
    await diff.waitFor();
    const config = diff.locator("tr").filter({ hasText: "config" }).locator("td");
    expect(await config.allTextContents()).to.deep.equal([
      JSON.stringify({ allowed_models: [MODEL, ONLY] }),
      JSON.stringify({ allowed_models: [MODEL] }),
    ]);
    await expectAccessible(page, "workspace-wide policy history");

    const asked = await confirming(async () => {
      await page.getByRole("button", { name: "Restore version 1" }).click();
      await page
        .locator("#pol-history-result")
        .filter({ hasText: "Version 1 restored." })
        .waitFor();
    });
    expect(asked).to.deep.equal([
      "Restore version 1 of Org speech models? This makes a new version equal to it.",
    ]);
    await versions().nth(2).waitFor();
    expect(await versions().nth(0).textContent()).to.include("restore of version 1");
    expect((await listed()).config.allowed_models).to.deep.equal([MODEL, ONLY]);
    // The list the console reads again after a restore shows the restored settings.
    await row("#account-policies-list", "Org speech models")
      .filter({ hasText: `allowed_models: ${MODEL}, ${ONLY}` })
      .waitFor();

    await page.getByRole("button", { name: "Run checks" }).click();
    await page.locator("#pol-history-result").filter({ hasText: "Every check passed." }).waitFor();
    expect(await page.locator("#pol-history-last-run").textContent()).to.match(/: passed\.$/);
  });

  it("reads a what-if as a sentence and says it counts the workspaces the policy covers", async () => {
    const change = { name: "Org speech models", config: { allowed_models: [ONLY] } };
    // The log is written off the hot path: wait until the API replays both requests.
    const api = await pollUntil(
      () => h.api.post(`${path()}/simulate`, { change }),
      (r) => r.status !== 200 || r.body.data.requests_replayed >= 2,
    );
    expect(api.status).to.equal(200);
    const answer = api.body.data;
    const refused = answer.newly_refused.find((r: { reason: string }) => r.reason === "model");
    expect(refused.count).to.equal(2);

    await openPolicies();
    await view()
      .getByRole("button", { name: "What-if on workspace-wide policy Org speech models" })
      .click();
    await page.locator("#pol-whatif").waitFor({ state: "visible" });
    await page
      .locator("#pol-shadow-report")
      .filter({ hasText: "No shadow runs on Org speech models." })
      .waitFor();
    expect(await page.locator("#pol-covers").textContent()).to.equal(
      "Org speech models is workspace-wide: its what-if replays, and its shadow decides, the " +
        "requests of each workspace it covers (1 workspace), added up; the shadow's report names them.",
    );
    // It has no edit form here: taking one says to type the change.
    await view().getByRole("button", { name: "Take the edit form's change" }).click();
    expect(await page.locator("#pol-whatif-error").textContent()).to.match(
      /^Org speech models is workspace-wide, with no edit form here: /,
    );

    await view().getByLabel("Proposed change (the JSON a save sends)").fill(JSON.stringify(change));
    await view().getByRole("button", { name: "Replay" }).click();
    const sentence = page.locator("#pol-whatif-sentence");
    await sentence.waitFor();
    expect(await sentence.textContent()).to.equal(
      `This change would have refused 2 of ${answer.requests_replayed} requests in the window, 2 of them for a model not allowed on key org-bot.`,
    );
    const samples = page.getByRole("list", { name: "Affected requests" }).getByRole("link");
    expect(await samples.allTextContents()).to.deep.equal(answer.affected_generation_ids);
    await expectAccessible(page, "workspace-wide policy what-if");
    await screenshot(page, "account-policy-whatif");
  });

  it("shows a shadow started through the API with the workspaces it counts, and promotes it", async () => {
    const change = { name: "Org speech models", config: { allowed_models: [ONLY] } };
    const started = await h.api.post(`${path()}/shadow`, {
      change,
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(started.status).to.equal(201);
    const id = await speak("Decided twice, answered once.");
    const report = await pollUntil(
      () => h.api.get(`${path()}/shadow`),
      (r) => r.status !== 200 || r.body.data.outcomes_changed >= 1,
    );
    expect(report.body.data.changes).to.deep.equal([
      { live: "allowed", shadow: "refused", count: 1 },
    ]);
    expect(report.body.data.workspace_ids).to.deep.equal([workspaceId]);

    // Opened afresh: the console learns of the shadow from the account list, not a GET of its own.
    await openPolicies();
    await view()
      .getByRole("button", { name: "What-if on workspace-wide policy Org speech models" })
      .click();
    const shadow = page.locator("#pol-shadow-sentence");
    await shadow.filter({ hasText: "differently" }).waitFor();
    expect(await shadow.textContent()).to.match(
      /^Since .+, the shadow decided 1 request differently: 1 request allowed live would have been refused\.$/,
    );
    const facts = page.locator("#pol-shadow-report dl");
    expect(await facts.locator("dt").allTextContents()).to.deep.equal([
      "Change",
      "Started",
      "Runs until",
      "Workspaces counted",
    ]);
    const workspace = (await h.api.get(`/api/v1/workspaces/${workspaceId}`)).body.data;
    expect(await facts.locator("dd").last().textContent()).to.equal(workspace.name);
    const shadowed = page
      .getByRole("list", { name: "Shadow's affected requests" })
      .getByRole("link");
    expect(await shadowed.allTextContents()).to.deep.equal([id]);
    expect(await shadowed.first().getAttribute("href")).to.equal(
      `#logs?q=${id}&workspace=${workspaceId}`,
    );
    await expectAccessible(page, "workspace-wide policy shadow");
    await screenshot(page, "account-policy-shadow");

    // The change fails the policy's check: promote is refused, then forced once confirmed.
    const asked = await confirming(async () => {
      await view().getByRole("button", { name: "Promote" }).click();
      await page
        .locator("#pol-shadow-result")
        .filter({ hasText: "Shadow promoted: Org speech models has its change (forced)." })
        .waitFor();
    });
    expect(asked[0]).to.equal(
      "Promote the shadow of Org speech models? Its change becomes the policy's.",
    );
    expect(asked[1]).to.match(/^409: .*The local engine may speak: expected allowed, got refused/);
    expect(c.errors.splice(0)).to.deep.equal([CONFLICT]);
    const promoted = await listed();
    expect(promoted.config.allowed_models).to.deep.equal([ONLY]);
    expect(promoted.shadow).to.equal(null);
    expect(await page.locator("#pol-shadow-report").textContent()).to.equal(
      "No shadow runs on Org speech models.",
    );
  });
});
