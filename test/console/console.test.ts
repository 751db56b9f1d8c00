import { existsSync } from "node:fs";
import { expect } from "chai";
import { type Browser, chromium, type Page } from "playwright-core";
import { CONSOLE_CSP } from "../../gateway/routes/console.js";
import { expectError } from "../kit/expect.js";
import { useSystem } from "../kit/gateway-harness.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/**
 * The console in a real headless Chromium (Debian's package; .ci/run installs it) against the
 * whole system with the embedded engine: sign in, create a guardrail through the form, assign
 * it, speak, and see the API's refusal when the guardrail's filter blocks.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const MODEL = "railgate/espeak-ng";

describe("console (headless Chromium)", () => {
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
      ["/console/console.css", "text/css"],
    ] as const) {
      const res = await fetch(`${h.baseUrl()}${path}`);
      expect(res.status, path).to.equal(200);
      expect(res.headers.get("content-type"), path).to.match(new RegExp(`^${type};`));
      expect(res.headers.get("content-security-policy"), path).to.equal(CONSOLE_CSP);
      expect(res.headers.get("x-content-type-options"), path).to.equal("nosniff");
      expect((await res.text()).length, path).to.be.greaterThan(100);
    }
    expect(CONSOLE_CSP).to.include("default-src 'none'").and.include("script-src 'self'");
    const other = await h.anon.get("/console/../package.json");
    expect(other.status).to.equal(404);
    expectError(await h.anon.get("/console/secrets.js"), 404, /./);
  });

  it("signs in, creates, edits and assigns a guardrail, speaks, and shows the filter's refusal", async () => {
    const created = await h.api.post("/api/v1/keys", { name: "console app" });
    expect(created.status).to.equal(201);
    const key: string = created.body.key;
    const hash: string = created.body.data.hash;

    await page.goto(`${h.baseUrl()}/console`);
    await page.getByLabel("Management key").fill("not-the-key-0123456789abcdef0123456789");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Sign-in failed: 401: / })
      .waitFor();
    expect(await page.locator("#admin").isHidden()).to.equal(true);

    // By keyboard this time: Enter in the labelled field submits.
    await page.getByLabel("Management key").fill(MANAGEMENT_KEY);
    await page.getByLabel("Management key").press("Enter");
    await page.locator("#admin").waitFor({ state: "visible" });
    expect(await page.evaluate('sessionStorage.getItem("railgate.managementKey")')).to.equal(
      MANAGEMENT_KEY,
    );

    // A bad body: the form shows the API's own 400 message, word for word.
    const form = page.locator("#guardrail-form");
    await form.getByLabel("Name").fill("Console filter");
    await form.getByLabel("Pattern (regular expression)").fill("(a+)+$");
    await form.getByRole("button", { name: "Create" }).click();
    const direct = await h.api.post("/api/v1/guardrails", {
      name: "Console filter",
      description: null,
      allowed_models: null,
      allowed_data_regions: null,
      content_filters: [{ pattern: "(a+)+$", action: "block" }],
      reset_interval: null,
      limit_usd: null,
    });
    expectError(direct, 400, /^content_filters\[0\]\.pattern /);
    await page.getByRole("alert").filter({ hasText: direct.body.error.message }).waitFor();
    expect(await page.locator("#guardrail-error").textContent()).to.equal(
      `400: ${direct.body.error.message}`,
    );

    await form.getByLabel("Pattern (regular expression)").fill("(?i)forbidden");
    await form.getByLabel("Action").selectOption("block");
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
    await page.locator("#keys").getByRole("button", { name: "Refresh" }).click();
    await page.locator("#keys-list").getByRole("cell", { name: hash, exact: true }).waitFor();
    await assignForm.getByLabel("Guardrail").selectOption({ label: "Console filter" });
    await assignForm.getByLabel("Key").selectOption(hash);
    await assignForm.getByRole("button", { name: "Assign" }).click();
    await page.locator("#assign-result").filter({ hasText: "Assigned: 1 key(s)." }).waitFor();
    const assigned = await h.api.get(`/api/v1/guardrails/${guardrail.id}/assignments/keys`);
    expect(assigned.body.data.map((a: { key_hash: string }) => a.key_hash)).to.include(hash);

    // Edit: the form fills from the row and saves with PATCH.
    await page.getByRole("button", { name: "Edit Console filter" }).click();
    expect(await form.getByLabel("Pattern (regular expression)").inputValue()).to.equal(
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
    await page.getByRole("button", { name: "Explain console app" }).click();
    await page.locator("#explain-out").filter({ hasText: guardrail.id }).waitFor();
    const workspaces = await h.api.get("/api/v1/workspaces");
    await page
      .locator("#workspaces-list")
      .getByRole("cell", { name: workspaces.body.data[0].id, exact: true })
      .waitFor();
    const credits = await h.api.get("/api/v1/credits");
    expect(JSON.parse((await page.locator("#credits-out").textContent()) ?? "")).to.deep.equal(
      credits.body,
    );

    const play = page.locator("#speak-form");
    await play.getByLabel("Standard API key").fill(key);
    await play.getByLabel("Model").selectOption(MODEL);
    await play.getByLabel("Voice").fill("en-us");
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
});
