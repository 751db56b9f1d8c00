import { existsSync } from "node:fs";
import { expect } from "chai";
import { type Browser, type BrowserContext, chromium } from "playwright-core";
import { DOCS_CSP, DOCS_SCRIPT_PATH, SCALAR_BUNDLE_PATH } from "../../gateway/openapi/docs-page.js";
import { CONSOLE_CSP } from "../../gateway/routes/console.js";
import { useSystem } from "../kit/gateway-harness.js";

/**
 * /docs in a real headless Chromium (Debian's package, as the console's suite) with every
 * request that is not to this machine refused and recorded: the reference renders the
 * operations of the gateway's own OpenAPI document from the bundle the gateway serves, tries to
 * reach no other host, and breaks no rule of its Content-Security-Policy.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const LOCAL_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document of any shape
type Doc = any;

describe("docs page (headless Chromium, offline)", function () {
  // A browser driving a page is slow on a loaded CI machine: a longer limit, not a timed assertion.
  this.timeout(120_000);
  const h = useSystem();
  let browser: Browser;
  let context: BrowserContext;
  /** Requests to any other host: refused, and kept here. */
  const elsewhere: string[] = [];

  before(async () => {
    if (!existsSync(CHROMIUM)) {
      // Not a skip: the page's only browser test would silently vanish.
      throw new Error(
        `Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`,
      );
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    context = await browser.newContext();
    await context.route("**/*", async (route) => {
      const url = route.request().url();
      const { protocol, hostname } = new URL(url);
      if ((protocol === "http:" || protocol === "https:") && !LOCAL_HOSTS.has(hostname)) {
        elsewhere.push(url);
        await route.abort("blockedbyclient");
        return;
      }
      await route.continue();
    });
  });
  after(async () => {
    await browser?.close();
  });

  it("serves the page, its script and the pinned bundle with a same-origin CSP that forbids framing", async () => {
    for (const [path, type] of [
      ["/docs", "text/html"],
      [DOCS_SCRIPT_PATH, "text/javascript"],
      [SCALAR_BUNDLE_PATH, "text/javascript"],
    ] as const) {
      const res = await fetch(`${h.baseUrl()}${path}`);
      expect(res.status, path).to.equal(200);
      expect(res.headers.get("content-type"), path).to.match(new RegExp(`^${type};`));
      expect(res.headers.get("content-security-policy"), path).to.equal(DOCS_CSP);
      expect(res.headers.get("x-frame-options"), path).to.equal("DENY");
      expect(res.headers.get("x-content-type-options"), path).to.equal("nosniff");
      const body = await res.text();
      expect(body, path).to.not.match(/cdn\.jsdelivr|unpkg\.com/);
    }
    const directives = DOCS_CSP.split("; ");
    expect(directives).to.include.members([
      "default-src 'none'",
      "script-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ]);
    // No other origin anywhere in the policy, and scripts exactly as strict as the console's.
    expect(DOCS_CSP).to.not.match(/https?:|\*/);
    expect(CONSOLE_CSP).to.include("script-src 'self';");
    const html = await (await fetch(`${h.baseUrl()}/docs`)).text();
    // No inline script: every <script> names a file of this origin.
    expect(html.match(/<script[^>]*>/g)).to.deep.equal([
      `<script src="${DOCS_SCRIPT_PATH}">`,
      `<script src="${SCALAR_BUNDLE_PATH}">`,
    ]);
    expect(SCALAR_BUNDLE_PATH).to.match(/^\/docs\/assets\/scalar-api-reference-\d+\.\d+\.\d+\.js$/);
    const bundle = await fetch(`${h.baseUrl()}${SCALAR_BUNDLE_PATH}`);
    expect(bundle.headers.get("cache-control")).to.include("immutable");
    expect(Number(bundle.headers.get("content-length"))).to.be.greaterThan(1_000_000);
  });

  it("renders the operations of the OpenAPI document with every other host refused", async () => {
    const doc: Doc = await (await fetch(`${h.baseUrl()}/api/v1/openapi.json`)).json();
    const summaries = [
      doc.paths["/api/v1/audio/speech"].post.summary,
      doc.paths["/api/v1/guardrails"].get.summary,
      doc.paths["/api/v1/keys"].post.summary,
      doc.paths["/api/v1/workspaces"].get.summary,
    ] as string[];
    for (const s of summaries) expect(s).to.be.a("string").that.is.not.empty;

    const page = await context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (err) => problems.push(`pageerror: ${err.message}`));
    page.on("console", (msg) => {
      if (msg.type() === "error") problems.push(`console: ${msg.text()}`);
    });
    // Reported by the browser itself for every directive the page breaks (injected through
    // the DevTools protocol, which the page's CSP does not govern).
    await page.addInitScript(`
      window.cspViolations = [];
      document.addEventListener("securitypolicyviolation", (e) =>
        window.cspViolations.push(e.violatedDirective + " " + e.blockedURI));
    `);
    await page.goto(`${h.baseUrl()}/docs`);
    for (const summary of summaries) {
      await page.getByText(summary, { exact: true }).first().waitFor();
    }
    // Grouped by resource: each tag of the document heads its operations on the page.
    for (const tag of doc.tags as { name: string }[]) {
      await page.getByText(tag.name, { exact: true }).first().waitFor();
    }
    expect(await page.title()).to.not.equal("");
    const violations = await page.evaluate("window.cspViolations");
    expect(violations, "CSP violations").to.deep.equal([]);
    expect(problems, "script errors").to.deep.equal([]);
    expect(elsewhere, "requests to other hosts").to.deep.equal([]);
    await page.close();
  });
});
