import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { expect } from "chai";
import { type Browser, chromium, type Page } from "playwright-core";
import { CONSOLE_CSP } from "../../gateway/routes/console.js";
import { expectError } from "../kit/expect.js";
import { useSystem } from "../kit/gateway-harness.js";
import { MANAGEMENT_KEY } from "../kit/system.js";
import { usd } from "./browser.js";

/**
 * The console in a real headless Chromium (Debian's package; .ci/run installs it) against the
 * whole system with the embedded engine: sign in, create a guardrail through the form, assign
 * it, speak, and see the API's refusal when the guardrail's filter blocks; then every kind of
 * guardrail field, assignments and deletion, each checked through the HTTP API.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const MODEL = "railgate/espeak-ng";

describe("console (headless Chromium)", function () {
  // A browser driving a page is slow on a loaded CI machine: a longer limit, not a timed assertion.
  this.timeout(120_000);
  const h = useSystem({ embeddedEngine: "auto", enginePoolSize: 1 });
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    if (!existsSync(CHROMIUM)) {
      // Not a skip: the console's only test would silently vanish.
      throw new Error(
        `Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`,
      );
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    page = await browser.newPage();
    // A CSP violation or a script error shows up here, not as a failed assertion elsewhere.
    page.on("pageerror", (err) => pageErrors.push(err.message));
    page.on("console", (msg) => {
      if (msg.type() === "error") pageErrors.push(msg.text());
    });
  });
  after(async () => {
    await browser?.close();
  });

  it("serves its files with their content types and a same-origin CSP", async () => {
    for (const [path, type] of [
      ["/console", "text/html"],
      ["/console/console.js", "text/javascript"],
      ["/console/lib/api.js", "text/javascript"],
      ["/console/lib/table.js", "text/javascript"],
      ["/console/views/guardrail-form.js", "text/javascript"],
      ["/console/views/keys.js", "text/javascript"],
      ["/console/console.css", "text/css"],
      ["/console/favicon.svg", "image/svg+xml"],
      ["/console/vendor/chart.umd.min.js", "text/javascript"],
    ] as const) {
      const res = await fetch(`${h.baseUrl()}${path}`);
      expect(res.status, path).to.equal(200);
      expect(res.headers.get("content-type"), path).to.satisfy((t: string) =>
        t.startsWith(`${type};`),
      );
      expect(res.headers.get("content-security-policy"), path).to.equal(CONSOLE_CSP);
      expect(res.headers.get("x-content-type-options"), path).to.equal("nosniff");
      expect((await res.text()).length, path).to.be.greaterThan(100);
    }
    expect(CONSOLE_CSP).to.include("default-src 'none'").and.include("script-src 'self'");
    const other = await h.anon.get("/console/../package.json");
    expect(other.status).to.equal(404);
    expectError(await h.anon.get("/console/secrets.js"), 404, /./);
    // A name picks from the list read at start-up: an escaping one is no file of it.
    expectError(await h.anon.get("/console/lib/..%2F..%2Fpackage.json"), 404, /./);
    expectError(await h.anon.get("/console/views/index.html"), 404, /./);
    // The chart library is the one package.json pins, byte for byte the installed file.
    const served = await (await fetch(`${h.baseUrl()}/console/vendor/chart.umd.min.js`)).text();
    const installed = readFileSync(
      new URL(
        "chart.umd.min.js",
        pathToFileURL(createRequire(import.meta.url).resolve("chart.js")),
      ),
      "utf8",
    );
    expect(served).to.equal(installed);
    const pinned = JSON.parse(readFileSync("package.json", "utf8")).dependencies["chart.js"];
    expect(pinned).to.match(/^\d+\.\d+\.\d+$/);
    expect(served).to.include(`Chart.js v${pinned}`);
  });

  it("signs in, creates, edits and assigns a guardrail, speaks, and shows the filter's refusal", async () => {
    const created = await h.api.post("/api/v1/keys", { name: "console app" });
    expect(created.status).to.equal(201);
    const key: string = created.body.key;
    const hash: string = created.body.data.hash;

    await page.goto(`${h.baseUrl()}/console`);
    await page.getByLabel("Management key").fill("not-the-key-0123456789abcdef0123456789");
    await page.getByRole("button", { name: "Sign in" }).click();
    // Beside the form, the field marked.
    await page
      .locator("#signin-form")
      .getByRole("alert")
      .filter({ hasText: /^Sign-in failed: 401: / })
      .waitFor();
    expect(await page.getByLabel("Management key").getAttribute("aria-invalid")).to.equal("true");
    expect(await page.locator("#admin").isHidden()).to.equal(true);

    // By keyboard this time: Enter in the labelled field submits.
    await page.getByLabel("Management key").fill(MANAGEMENT_KEY);
    await page.getByLabel("Management key").press("Enter");
    await page.locator("#admin").waitFor({ state: "visible" });
    expect(await page.evaluate('sessionStorage.getItem("railgate.managementKey")')).to.equal(
      MANAGEMENT_KEY,
    );
    await page.getByRole("link", { name: "Guardrails" }).click();

    // A bad body: the form shows the API's own 400 message, word for word.
    const form = page.locator("#guardrail-form");
    await form.getByLabel("Name", { exact: true }).fill("Console filter");
    await form.getByRole("button", { name: "Add custom filter" }).click();
    await form.getByLabel("Pattern 1 (regular expression)").fill("(a+)+$");
    await form.getByRole("button", { name: "Create" }).click();
    const direct = await h.api.post("/api/v1/guardrails", {
      content_filters: [{ pattern: "(a+)+$", action: "block", label: null }],
      name: "Console filter",
    });
    expectError(direct, 400, /^content_filters\[0\]\.pattern /);
    await page.getByRole("alert").filter({ hasText: direct.body.error.message }).waitFor();
    expect(await page.locator("#guardrail-error").textContent()).to.equal(
      `400: ${direct.body.error.message}`,
    );

    await form.getByLabel("Pattern 1 (regular expression)").fill("(?i)forbidden");
    await form.getByLabel("Action of filter 1").selectOption("block");
    await form.getByRole("button", { name: "Create" }).click();
    await page
      .locator("#guardrails-list")
      .getByRole("cell", { name: "Console filter", exact: true })
      .waitFor();
    const listed = await h.api.get("/api/v1/guardrails");
    const guardrail = listed.body.data.find((g: { name: string }) => g.name === "Console filter");
    expect(guardrail.content_filters).to.deep.equal([
      { pattern: "(?i)forbidden", action: "block", label: null },
    ]);

    const assignForm = page.locator("#assign-form");
    await page.getByRole("link", { name: "Keys" }).click();
    await page.locator("#keys").getByRole("button", { name: "Refresh" }).click();
    await page
      .locator("#keys-list")
      .getByRole("cell", { name: "console app", exact: true })
      .waitFor();
    await page.getByRole("link", { name: "Guardrails" }).click();
    await assignForm.getByLabel("Guardrail").selectOption({ label: "Console filter" });
    await assignForm.getByLabel("Key").selectOption(hash);
    await assignForm.getByRole("button", { name: "Assign" }).click();
    await page.locator("#assign-result").filter({ hasText: "Assigned: 1 key(s)." }).waitFor();
    const assigned = await h.api.get(`/api/v1/guardrails/${guardrail.id}/assignments/keys`);
    expect(assigned.body.data.map((a: { key_hash: string }) => a.key_hash)).to.include(hash);

    // Edit: the form fills from the row and saves with PATCH.
    await page.getByRole("button", { name: "Edit Console filter" }).click();
    expect(await form.getByLabel("Pattern 1 (regular expression)").inputValue()).to.equal(
      "(?i)forbidden",
    );
    await form.getByLabel("Description").fill("blocks one word");
    await form.getByRole("button", { name: "Save" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Guardrail Console filter saved/ })
      .waitFor();
    const edited = await h.api.get(`/api/v1/guardrails/${guardrail.id}`);
    expect(edited.body.data.description).to.equal("blocks one word");
    expect(edited.body.data.content_filters).to.deep.equal(guardrail.content_filters);

    // The other views answer from the API: explain for the key, workspaces, credits.
    await page.getByRole("link", { name: "Keys" }).click();
    await page.getByRole("button", { name: "Explain console app" }).click();
    // Shown by name; the API's own answer (with the id) beside it, folded.
    await page
      .locator("#explain-view")
      .getByRole("cell", { name: "Console filter", exact: true })
      .waitFor();
    await page
      .locator("#explain-out")
      .filter({ hasText: guardrail.id })
      .waitFor({ state: "attached" });
    const workspaces = await h.api.get("/api/v1/workspaces");
    await page.getByRole("link", { name: "Workspaces" }).click();
    await page
      .locator("#workspaces-list")
      .getByRole("cell", { name: workspaces.body.data[0].slug, exact: true })
      .waitFor();
    // Credits as figures for people: each card holds the API's amount, formatted as money.
    const credits = (await h.api.get("/api/v1/credits")).body.data;
    const spent = (
      await h.api.get("/api/v1/usage?granularity=day&group_by=workspace")
    ).body.data.reduce((a: number, r: { spend_usd: number }) => a + r.spend_usd, 0);
    await page.getByRole("link", { name: "Credits" }).click();
    const cards = page.locator("#credits-out .stat");
    await cards.first().waitFor();
    expect(await cards.allInnerTexts()).to.deep.equal([
      `Balance\n${credits.metered ? usd(credits.balance_usd) : "not metered"}`,
      `Credits added\n${usd(credits.total_credits)}`,
      `Drawn from credits\n${usd(credits.total_usage)}`,
      // The same spend the dashboard reads (the usage series), not only what credits paid for.
      `Spend, last 30 days\n${usd(spent)}`,
    ]);

    await page.getByRole("link", { name: "Speech playground" }).click();
    const play = page.locator("#speak-form");
    await play.getByLabel("Standard API key").fill(key);
    await play.getByLabel("Model").selectOption(MODEL);
    // The voices are the chosen model's, from the model list.
    const catalogue = await h.anon.get("/api/v1/models?output_modalities=speech");
    const voices = catalogue.body.data.find((m: { id: string }) => m.id === MODEL).voices;
    expect(
      await play
        .getByLabel("Voice")
        .locator("option")
        .evaluateAll((os) => os.map((o) => o.getAttribute("value"))),
    ).to.deep.equal(voices.map((v: { id: string }) => v.id));
    await play.getByLabel("Voice").selectOption("en-us");
    await play.getByLabel("Format").selectOption("mp3");
    await play.getByLabel("Text").fill("Hello from the console.");
    await play.getByRole("button", { name: "Speak" }).click();
    const done = page.locator("#speak-result").filter({ hasText: /^Done: received \d+ bytes/ });
    await done.waitFor();
    const doneText = (await done.textContent()) ?? "";
    const bytes = Number(doneText.match(/\d+/)?.[0]);
    // Chromium plays mp3 through MediaSource, chunk by chunk, not after the last byte.
    expect(await page.evaluate('MediaSource.isTypeSupported("audio/mpeg")')).to.equal(true);
    expect(doneText).to.match(/\(played as it arrived\)\.$/);
    expect(bytes).to.be.greaterThan(1000);
    expect(await page.locator("#p-audio").getAttribute("src")).to.match(/^blob:/);
    expect(await page.locator("#speak-error").textContent()).to.equal("");
    const generationId = await page.getByLabel(/Generation id/).inputValue();
    expect(generationId).to.not.equal("");
    await page.getByRole("button", { name: "Look up" }).click();
    const record = await h.api.withKey(key).get(`/api/v1/generation?id=${generationId}`);
    expect(record.status).to.equal(200);
    await page.locator("#generation-out").filter({ hasText: generationId }).waitFor();
    expect(JSON.parse((await page.locator("#generation-out").textContent()) ?? "")).to.deep.equal(
      record.body,
    );

    await play.getByLabel("Text").fill("This is forbidden talk.");
    await play.getByRole("button", { name: "Speak" }).click();
    const refusal = await h.api.withKey(key).post("/api/v1/audio/speech", {
      model: MODEL,
      voice: "en-us",
      input: "This is forbidden talk.",
      response_format: "mp3",
    });
    expectError(refusal, 403, /^Request blocked by content filter: /);
    await page.locator("#speak-error").filter({ hasText: refusal.body.error.message }).waitFor();
    expect(await page.locator("#speak-error").textContent()).to.equal(
      `403: ${refusal.body.error.message}`,
    );
    expect(await page.locator("#speak-error").getAttribute("aria-live")).to.equal("assertive");

    // Script errors and CSP refusals ("Refused to ...") would be defects; Chromium also logs each
    // non-2xx answer as a failed load (the 401/400/403 above, the favicon's 404): those are expected.
    expect(pageErrors.filter((e) => !e.startsWith("Failed to load resource:"))).to.deep.equal([]);
  });
  it("edits every kind of guardrail field, sends only the changes, unassigns and deletes", async () => {
    const own = await browser.newPage();
    own.on("pageerror", (err) => pageErrors.push(err.message));
    own.on("console", (msg) => {
      if (msg.type() === "error") pageErrors.push(msg.text());
    });
    const member = "user-console-1";
    const keyRes = await h.api.post("/api/v1/keys", {
      name: "console policy app",
      member_user_id: member,
    });
    expect(keyRes.status).to.equal(201);
    const hash: string = keyRes.body.data.hash;
    const made = await h.api.post("/api/v1/guardrails", {
      name: "Console policy",
      description: "kept as is",
      allowed_models: ["railgate/espeak-ng"],
    });
    expect(made.status).to.equal(201);
    const id: string = made.body.data.id;
    const assigned = await h.api.post(`/api/v1/guardrails/${id}/assignments/keys`, {
      key_hashes: [hash],
    });
    expect(assigned.body.assigned_count).to.equal(1);

    await own.goto(`${h.baseUrl()}/console`);
    await own.getByLabel("Management key").fill(MANAGEMENT_KEY);
    await own.getByRole("button", { name: "Sign in" }).click();
    await own.getByRole("link", { name: "Guardrails" }).click();
    await own.getByRole("button", { name: "Edit Console policy" }).click();
    const form = own.locator("#guardrail-form");
    expect(await form.getByLabel("Allowed models").inputValue()).to.equal("railgate/espeak-ng");

    await form.getByLabel("Enforce ZDR: openai").check();
    await form.getByLabel("Enforce ZDR: other vendors").check();
    await form.getByLabel("Safety retention for google models").selectOption("false");
    await form.getByLabel("Allowed providers").fill("espeak, openai");
    await form.getByLabel("Ignored providers").fill("elevenlabs");
    await form.getByLabel("Ignored models").fill("openai/tts-1-hd");
    await form.getByRole("checkbox", { name: "europe" }).check();
    await form.getByLabel("Allow paid endpoints that train on request data").check();
    await form.getByLabel("Count spend through own provider keys").check();
    await form.getByLabel("Builtin filter email", { exact: true }).selectOption("redact");
    await form
      .getByLabel("Builtin filter regex-prompt-injection", { exact: true })
      .selectOption("flag");
    await form
      .getByLabel("Builtin filter regex-prompt-injection: messages scanned")
      .selectOption("user_only");
    await form.getByRole("button", { name: "Add custom filter" }).click();
    await form.getByLabel("Pattern 1 (regular expression)").fill("secret-\\d+");
    await form.getByLabel("Action of filter 1").selectOption("redact");
    await form.getByLabel("Redaction label 1 (optional)").fill("[SECRET]");
    await form.getByLabel("Limit (USD)").fill("5");
    await form.getByLabel("Reset interval").selectOption("weekly");
    // Names the catalog does not list are warned about once, beside their field; a second save
    // keeps them as typed.
    await form.getByRole("button", { name: "Save" }).click();
    await form
      .getByText(/^Not in the catalog: /)
      .first()
      .waitFor();
    const patch = own.waitForRequest((r) => r.method() === "PATCH");
    await form.getByRole("button", { name: "Save" }).click();
    // PATCH semantics: the keys sent are the update mask, so name, description and the allowed
    // models (unchanged) must not be among them.
    expect((await patch).postDataJSON()).to.deep.equal({
      allowed_data_regions: ["europe"],
      content_filter_builtins: [
        { slug: "email", action: "redact" },
        { slug: "regex-prompt-injection", action: "flag", scan_scope: "user_only" },
      ],
      content_filters: [{ pattern: "secret-\\d+", action: "redact", label: "[SECRET]" }],
      reset_interval: "weekly",
      limit_usd: 5,
      allowed_providers: ["espeak", "openai"],
      ignored_providers: ["elevenlabs"],
      ignored_models: ["openai/tts-1-hd"],
      enable_paid_model_training: true,
      enforce_zdr_openai: true,
      enforce_zdr_other: true,
      include_byok_in_budgets: true,
      allow_safety_retention_google: false,
    });
    await own
      .getByRole("status")
      .filter({ hasText: /^Guardrail Console policy saved/ })
      .waitFor();
    const stored = (await h.api.get(`/api/v1/guardrails/${id}`)).body.data;
    expect(stored).to.deep.include({
      name: "Console policy",
      description: "kept as is",
      allowed_models: ["railgate/espeak-ng"],
      allowed_providers: ["espeak", "openai"],
      ignored_providers: ["elevenlabs"],
      ignored_models: ["openai/tts-1-hd"],
      allowed_data_regions: ["europe"],
      enforce_zdr_anthropic: false,
      enforce_zdr_openai: true,
      enforce_zdr_google: false,
      enforce_zdr_xai: false,
      enforce_zdr_other: true,
      allow_safety_retention_google: false,
      allow_safety_retention_other: null,
      enable_free_model_publication: false,
      enable_free_model_training: false,
      enable_paid_model_training: true,
      include_byok_in_budgets: true,
      limit_usd: 5,
      reset_interval: "weekly",
    });
    expect(stored.content_filter_builtins).to.deep.equal([
      { slug: "email", action: "redact", label: "[EMAIL]" },
      {
        slug: "regex-prompt-injection",
        action: "flag",
        label: "[PROMPT_INJECTION]",
        scan_scope: "user_only",
      },
    ]);
    expect(stored.content_filters).to.deep.equal([
      { pattern: "secret-\\d+", action: "redact", label: "[SECRET]" },
    ]);

    // Reopened, the form shows what is stored; saving it untouched sends nothing.
    await own.getByRole("button", { name: "Edit Console policy" }).click();
    expect(await form.getByLabel("Enforce ZDR: openai").isChecked()).to.equal(true);
    expect(await form.getByLabel("Enforce ZDR: anthropic").isChecked()).to.equal(false);
    expect(
      await form.getByLabel("Builtin filter regex-prompt-injection: messages scanned").inputValue(),
    ).to.equal("user_only");
    expect(await form.getByLabel("Redaction label 1 (optional)").inputValue()).to.equal("[SECRET]");
    await form.getByRole("button", { name: "Save" }).click();
    await own
      .locator("#guardrail-error")
      .filter({ hasText: /^Nothing changed/ })
      .waitFor();

    // "Every vendor" sets the five flags; turning off the builtin and the custom filter sends
    // null for them (how the API removes a filter list); a budget without its interval is the
    // API's 400, shown as it said it.
    await form.getByLabel("Enforce ZDR for every vendor").check();
    await form.getByLabel("Builtin filter email", { exact: true }).selectOption("");
    await form
      .getByLabel("Builtin filter regex-prompt-injection", { exact: true })
      .selectOption("");
    await form.getByRole("button", { name: "Remove filter 1" }).click();
    await form.getByLabel("Reset interval").selectOption("");
    const refused = await h.api.patch(`/api/v1/guardrails/${id}`, {
      limit_usd: 5,
      reset_interval: null,
    });
    expect(refused.status).to.equal(400);
    await form.getByRole("button", { name: "Save" }).click();
    await own.getByRole("alert").filter({ hasText: refused.body.error.message }).waitFor();
    expect(await own.locator("#guardrail-error").textContent()).to.equal(
      `400: ${refused.body.error.message}`,
    );
    await form.getByLabel("Reset interval").selectOption("monthly");
    const second = own.waitForRequest((r) => r.method() === "PATCH");
    // The status line may still say "saved" from the first save: wait for this PATCH's answer.
    const secondAnswered = own.waitForResponse((r) => r.request().method() === "PATCH");
    await form.getByRole("button", { name: "Save" }).click();
    expect((await second).postDataJSON()).to.deep.equal({
      content_filter_builtins: null,
      content_filters: null,
      reset_interval: "monthly",
      limit_usd: 5,
      enforce_zdr_anthropic: true,
      enforce_zdr_google: true,
      enforce_zdr_xai: true,
    });
    await own
      .getByRole("status")
      .filter({ hasText: /^Guardrail Console policy saved/ })
      .waitFor();
    expect((await secondAnswered).status()).to.equal(200);
    const again = (await h.api.get(`/api/v1/guardrails/${id}`)).body.data;
    expect(again).to.deep.include({
      content_filter_builtins: null,
      content_filters: null,
      reset_interval: "monthly",
      enforce_zdr_anthropic: true,
      enforce_zdr_openai: true,
      enforce_zdr_google: true,
      enforce_zdr_xai: true,
      enforce_zdr_other: true,
    });

    // A member through the form (suggested from the key's owner), then both unassigned.
    const memberForm = own.locator("#assign-member-form");
    await own.getByRole("link", { name: "Keys" }).click();
    await own.locator("#keys").getByRole("button", { name: "Refresh" }).click();
    await own
      .locator("#keys-list")
      .getByRole("cell", { name: "console policy app", exact: true })
      .waitFor();
    await own.getByRole("link", { name: "Guardrails" }).click();
    expect(
      await own
        .locator("#member-ids option")
        .evaluateAll((os) => os.map((o) => o.getAttribute("value"))),
    ).to.include(member);
    await memberForm.getByLabel("Guardrail").selectOption({ label: "Console policy" });
    await memberForm.getByLabel("Member user id").fill(member);
    await memberForm.getByRole("button", { name: "Assign member" }).click();
    await own
      .locator("#assign-member-result")
      .filter({ hasText: "Assigned: 1 member(s)." })
      .waitFor();
    const members = await h.api.get(`/api/v1/guardrails/${id}/assignments/members`);
    expect(members.body.data.map((a: { user_id: string }) => a.user_id)).to.deep.equal([member]);

    await own.getByRole("button", { name: "Assignments of Console policy" }).click();
    const panel = own.locator("#assignments");
    await panel.getByRole("cell", { name: hash, exact: true }).waitFor();
    await panel.getByRole("cell", { name: member, exact: true }).waitFor();
    await panel.getByRole("button", { name: "Unassign key console policy app" }).click();
    await own
      .locator("#assignments-result")
      .filter({ hasText: /^Unassigned key console policy app: 1 removed/ })
      .waitFor();
    await panel.getByRole("cell", { name: hash, exact: true }).waitFor({ state: "detached" });
    const keysLeft = await h.api.get(`/api/v1/guardrails/${id}/assignments/keys`);
    expect(keysLeft.body.data).to.deep.equal([]);
    await panel.getByRole("button", { name: `Unassign member ${member}` }).click();
    await panel.getByText("No assigned members.").waitFor();
    const membersLeft = await h.api.get(`/api/v1/guardrails/${id}/assignments/members`);
    expect(membersLeft.body.data).to.deep.equal([]);

    // Delete asks first: dismissed, the guardrail stays; accepted, the API no longer has it.
    own.once("dialog", (d) => void d.dismiss());
    await own.getByRole("button", { name: "Delete Console policy" }).click();
    await own.getByRole("status").filter({ hasText: "Guardrail Console policy kept." }).waitFor();
    expect((await h.api.get(`/api/v1/guardrails/${id}`)).status).to.equal(200);
    let question = "";
    own.once("dialog", (d) => {
      question = d.message();
      void d.accept();
    });
    await own.getByRole("button", { name: "Delete Console policy" }).click();
    await own
      .getByRole("status")
      .filter({ hasText: "Guardrail Console policy deleted." })
      .waitFor();
    expect(question).to.include(id);
    expectError(await h.api.get(`/api/v1/guardrails/${id}`), 404, /./);
    await own.getByRole("button", { name: "Edit Console policy" }).waitFor({ state: "detached" });
    expect(await panel.isHidden()).to.equal(true);

    // workspace_id is set on create only: chosen from the list, then shown but not editable.
    const ws = await h.api.post("/api/v1/workspaces", {
      name: "Console team",
      slug: "console-team",
    });
    expect(ws.status).to.equal(201);
    await own.getByRole("link", { name: "Workspaces" }).click();
    await own.locator("#workspaces").getByRole("button", { name: "Refresh" }).click();
    await own.getByRole("link", { name: "Guardrails" }).click();
    await form.getByLabel("Workspace (set on create only)").selectOption(ws.body.data.id);
    await form.getByLabel("Name", { exact: true }).fill("Console team policy");
    await form.getByRole("button", { name: "Create" }).click();
    await own.getByRole("button", { name: "Edit Console team policy" }).click();
    expect(await form.getByLabel("Workspace (set on create only)").isDisabled()).to.equal(true);
    const teamPolicy = (
      await h.api.get(`/api/v1/guardrails?workspace_id=${ws.body.data.id}`)
    ).body.data.find((g: { name: string }) => g.name === "Console team policy");
    expect(teamPolicy.workspace_id).to.equal(ws.body.data.id);
    expect(await own.getByLabel("Show the guardrails of").inputValue()).to.equal(ws.body.data.id);
    await own.getByRole("link", { name: "Workspaces" }).click();

    // The workspace's default guardrail: 404 until configured; saving the form configures it.
    const defaultId: string = ws.body.data.default_guardrail_id;
    expectError(await h.api.get(`/api/v1/guardrails/${defaultId}`), 404, /./);
    await own.getByRole("button", { name: "Edit the default guardrail of Console team" }).click();
    await own
      .getByRole("status")
      .filter({ hasText: /is not configured yet/ })
      .waitFor();
    await form.getByLabel("Enforce ZDR: anthropic").check();
    await form.getByRole("button", { name: "Save" }).click();
    await own
      .getByRole("status")
      .filter({ hasText: `Guardrail Workspace ${ws.body.data.id} Default saved` })
      .waitFor();
    const configured = await h.api.get(`/api/v1/guardrails/${defaultId}`);
    expect(configured.status).to.equal(200);
    expect(configured.body.data.enforce_zdr_anthropic).to.equal(true);
    await own.close();
    expect(pageErrors.filter((e) => !e.startsWith("Failed to load resource:"))).to.deep.equal([]);
  });

  it("turns a workspace's audio cache on in its form and shows its hit ratio", async () => {
    const own = await browser.newPage();
    own.on("pageerror", (err) => pageErrors.push(err.message));
    const ws = await h.api.post("/api/v1/workspaces", { name: "Console cache" });
    expect(ws.status).to.equal(201);
    expect(ws.body.data.audio_cache).to.equal(false);
    await own.goto(`${h.baseUrl()}/console`);
    await own.getByLabel("Management key").fill(MANAGEMENT_KEY);
    await own.getByRole("button", { name: "Sign in" }).click();
    await own.getByRole("link", { name: "Workspaces" }).click();
    await own.getByRole("button", { name: "Edit workspace Console cache" }).click();
    await own.getByLabel(/Audio cache: serve identical/).check();
    await own.getByRole("button", { name: "Save workspace" }).click();
    await own.getByRole("status").filter({ hasText: "Workspace Console cache saved." }).waitFor();
    expect(
      (await h.api.get(`/api/v1/workspaces/${ws.body.data.id}`)).body.data.audio_cache,
    ).to.equal(true);
    // Two identical requests: a miss, then a hit; the row shows the ratio the API counts.
    const key = await h.api.post("/api/v1/keys", {
      name: "console cache app",
      workspace_id: ws.body.data.id,
    });
    const speak = () =>
      fetch(`${h.baseUrl()}/api/v1/audio/speech`, {
        method: "POST",
        headers: { authorization: `Bearer ${key.body.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, voice: "en-us", input: "Cached twice." }),
      }).then(async (r) => {
        await r.arrayBuffer();
        expect(r.status).to.equal(200);
      });
    await speak();
    await speak();
    await own.locator("#workspaces").getByRole("button", { name: "Refresh" }).click();
    await own
      .locator("#workspaces-list")
      .getByRole("cell", { name: /^on · 50% hits \(1 of 2\) · 1 clips/ })
      .waitFor();
    await own.close();
    expect(pageErrors.filter((e) => !e.startsWith("Failed to load resource:"))).to.deep.equal([]);
  });
});
