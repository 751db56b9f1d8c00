import { expect } from "chai";
import type { Page } from "playwright-core";
import { useSystem } from "../kit/gateway-harness.js";
import { postSpeech } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { useConsole } from "./browser.js";

const MODEL = "railgate/espeak-ng";

/**
 * Lists that answer and input checked where it is typed, in a real headless Chromium: filters and
 * pages in the URL (a link opens the same list, Back returns), the chosen workspace remembered,
 * the status line left behind on navigation, money fields and catalog names marked in the form
 * before anything is sent, and Explain by a key's name.
 */
describe("console lists and input (headless Chromium)", function () {
  this.timeout(180_000);
  const h = useSystem({ embeddedEngine: "auto", enginePoolSize: 1 });
  const c = useConsole(h);
  const { open, errors } = c;
  let page: Page;
  let workspaceId: string;

  before(async () => {
    page = c.page;
    const ws = await h.api.post("/api/v1/workspaces", { name: "Support", slug: "support" });
    expect(ws.status).to.equal(201);
    workspaceId = ws.body.data.id;
    const g = await h.api.post("/api/v1/guardrails", {
      name: "support-only",
      workspace_id: workspaceId,
    });
    expect(g.status).to.equal(201);
    const key = await h.api.post("/api/v1/keys", { name: "lister" });
    const blocker = await h.api.post("/api/v1/guardrails", {
      name: "no-secrets",
      content_filters: [{ pattern: "(?i)secret", action: "block", label: null }],
    });
    await h.api.post(`/api/v1/guardrails/${blocker.body.data.id}/assignments/keys`, {
      key_hashes: [key.body.data.hash],
    });
    for (const [input, status] of [
      ["One.", 200],
      ["A secret.", 403],
    ] as const) {
      const res = await postSpeech(h.baseUrl(), key.body.key, {
        model: MODEL,
        voice: "en-us",
        input,
        response_format: "mp3",
      });
      expect(res.status).to.equal(status);
    }
    await pollUntil(
      async () => (await h.api.get(`/api/v1/generations?key_hash=${key.body.data.hash}`)).body.data,
      (data) => data.length === 2,
    );
  });

  it("keeps the request log's filters in the URL: a link opens the same list, Back returns", async () => {
    await open("Logs");
    const logs = page.locator("#logs-list");
    await logs.locator("tbody tr").first().waitFor();
    const form = page.locator("#logs-form");
    await form.getByLabel("Key").selectOption({ label: "lister" });
    await form.getByLabel("Status").selectOption("refused");
    await form.getByRole("button", { name: "Apply filters" }).click();
    await logs.getByText(/^1 shown/).waitFor();
    const url = page.url();
    expect(decodeURIComponent(new URL(url).hash)).to.match(/^#logs\?.*status=refused/);

    // The link, opened afresh: the same filters, the same rows.
    const other = await c.context.newPage();
    await other.goto(url);
    await other.getByLabel("Management key").fill(await managementKey());
    await other.getByRole("button", { name: "Sign in" }).click();
    await other
      .locator("#logs-list")
      .getByText(/^1 shown/)
      .waitFor();
    expect(await other.locator("#log-status").inputValue()).to.equal("refused");
    expect(await other.locator("#logs-list tbody tr td.name").count()).to.equal(1);
    await other.close();

    // Back: the list before the filters.
    await form.getByLabel("Status").selectOption("");
    await form.getByRole("button", { name: "Apply filters" }).click();
    await logs.getByText(/^2 shown/).waitFor();
    await page.goBack();
    await logs.getByText(/^1 shown/).waitFor();
    expect(await form.getByLabel("Status").inputValue()).to.equal("refused");
    await form.getByRole("button", { name: "Clear" }).click();
    expect(new URL(page.url()).hash).to.equal("#logs");
  });

  it("keeps a list's search in the URL and remembers the chosen workspace across views and reloads", async () => {
    await open("Keys");
    await page.getByLabel("Search keys").fill("lister");
    await page
      .locator("#keys-list")
      .getByText(/^1 of \d+ keys$/)
      .waitFor();
    expect(new URL(page.url()).hash).to.equal("#keys?q=lister");
    await page.reload();
    await page
      .locator("#keys-list")
      .getByText(/^1 of \d+ keys$/)
      .waitFor();
    expect(await page.getByLabel("Search keys").inputValue()).to.equal("lister");

    await open("Guardrails");
    await page.getByLabel("Show the guardrails of").selectOption({ label: "Support" });
    await c.row("#guardrails-list", "support-only").waitFor();
    await page.reload();
    await open("Guardrails");
    await c.row("#guardrails-list", "support-only").waitFor();
    expect(await page.getByLabel("Show the guardrails of").inputValue()).to.equal(workspaceId);
    await open("Dashboard");
    expect(await page.locator("#range-workspace").inputValue()).to.equal(workspaceId);
    // Back to every workspace, for the suites after this one.
    await page.locator("#range-workspace").selectOption("");
  });

  it("clears the status line on navigation and keeps the sidebar at the top of a long page", async () => {
    await open("Workspaces");
    const form = page.locator("#workspace-form");
    await form.getByLabel("Workspace name").fill("Status check");
    await form.getByLabel("Slug").fill("status-check");
    await form.getByRole("button", { name: "Create workspace" }).click();
    await page.getByRole("status").filter({ hasText: "Workspace Status check created." }).waitFor();
    await open("Keys");
    await pollUntil(
      () => page.getByRole("status").textContent(),
      (text) => text === "",
    );
    await page.evaluate("window.scrollTo(0, document.body.scrollHeight)");
    const brand = await page.locator(".brand").boundingBox();
    expect(brand?.y).to.be.within(0, 40);
  });

  it("marks a money field typed wrong and sends nothing, and warns about a model not in the catalog", async () => {
    await open("Keys");
    const form = page.locator("#key-form");
    await form.getByLabel("Name").fill("comma-money");
    await form.getByLabel("Spend limit").fill("1,50");
    let posted = 0;
    const count = (r: { method(): string }) => {
      if (r.method() === "POST") posted += 1;
    };
    page.on("request", count);
    await form.getByRole("button", { name: "Create key" }).click();
    const limit = form.getByLabel("Spend limit");
    expect(await limit.getAttribute("aria-invalid")).to.equal("true");
    await form.getByText(/Spend limit: “1,50” is not an amount in dollars/).waitFor();
    expect(posted).to.equal(0);
    await limit.fill("1.50");
    await form.getByRole("button", { name: "Create key" }).click();
    await page.locator("#key-secret-card").waitFor({ state: "visible" });
    page.off("request", count);
    expect(await limit.getAttribute("aria-invalid")).to.equal(null);
    await page.locator("#key-secret-card").getByRole("button", { name: "Done" }).click();

    await open("Guardrails");
    const g = page.locator("#guardrail-form");
    await g.getByLabel("Name", { exact: true }).fill("typo-guard");
    // Picked from the catalog: added to the list.
    await g.getByLabel("Add a catalog model to the allowed list").selectOption(MODEL);
    expect(await g.getByLabel("Allowed models", { exact: true }).inputValue()).to.equal(MODEL);
    await g.getByLabel("Allowed models", { exact: true }).fill(`${MODEL}, railgate/espeak-nq`);
    const create = g.getByRole("button", { name: "Create", exact: true });
    await create.click();
    await g.getByText(/Not in the catalog: railgate\/espeak-nq/).waitFor();
    const before = (await h.api.get("/api/v1/guardrails?limit=100")).body.data;
    expect(before.map((x: { name: string }) => x.name)).to.not.include("typo-guard");
    // Warned once: a second save keeps it as typed.
    await create.click();
    await pollUntil(
      async () => (await h.api.get("/api/v1/guardrails?limit=100")).body.data,
      (list: { name: string }[]) => list.some((x) => x.name === "typo-guard"),
    );
  });

  it("explains a key by its name", async () => {
    await open("Explain a key");
    await page.getByLabel("Key name or hash").fill("lister");
    await page.getByRole("button", { name: "Explain", exact: true }).click();
    await page.locator("#explain-view").getByRole("heading", { name: "Key lister" }).waitFor();
    expect(errors).to.deep.equal([]);
  });

  async function managementKey(): Promise<string> {
    return (await page.evaluate('sessionStorage.getItem("railgate.managementKey")')) as string;
  }
});
