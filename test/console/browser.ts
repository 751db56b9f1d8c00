import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { expect } from "chai";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import type { Harness } from "../kit/gateway-harness.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/**
 * What the console's browser tests share: Debian's Chromium (headless), a record of every error
 * the page logs, the axe-core check, and the screenshots kept as test artifacts.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Where the screenshots go (git-ignored): one PNG per view, from the last run. */
export const ARTIFACTS = "test-artifacts/console";

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    // Not a skip: the console's tests would silently vanish.
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true });
}

/** Script errors, CSP refusals ("Refused to ...") and console.error lines of `page`, into `into`. */
export function recordErrors(page: Page, into: string[]): void {
  page.on("pageerror", (err) => into.push(err.message));
  page.on("console", (msg) => {
    if (msg.type() === "error") into.push(msg.text());
  });
}

const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core on the page as it is. The page's CSP (script-src 'self') refuses an inline script, so
 * page.addScriptTag({ content }) cannot inject it; page.evaluate runs through the DevTools
 * protocol, which the CSP does not govern, and leaves the page's policy as it is.
 */
export async function expectAccessible(page: Page, view: string): Promise<void> {
  if (!(await page.evaluate("typeof window.axe === 'object'"))) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)",
  )) as AxeViolation[];
  const serious = violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
    );
  expect(serious, `axe on the ${view} view`).to.deep.equal([]);
}

/** A PNG of the view (the whole page, or what the window shows), under test-artifacts/console/. */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: `${ARTIFACTS}/${name}.png`, fullPage });
}

/**
 * Money as the console shows it (en-US): cents from $1 up, four significant digits below $1 (never
 * fewer than cents).
 */
export function usd(n: number): string {
  const cents = (x: number, digits = 2) =>
    new Intl.NumberFormat("en-US", {
      style: "currency",
      currency: "USD",
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }).format(x);
  if (n === 0 || Math.abs(n) >= 1) return cents(n);
  const rounded = Number(n.toPrecision(4));
  if (Math.abs(rounded) >= 1) return cents(rounded);
  const [mantissa = "", exponent = "0"] = Math.abs(rounded).toExponential().split("e");
  const digits = (mantissa.split(".")[1] ?? "").length - Number(exponent);
  return cents(rounded, Math.max(2, digits));
}

export interface ConsoleSession {
  browser: Browser;
  context: BrowserContext;
  /** Signed in with the management key, 1440 x 900, en-US. */
  page: Page;
  /** What the page logged as errors; each test leaves it empty (see useConsole). */
  errors: string[];
  /** Opens a view by its link in the sidebar. */
  open(view: string): Promise<void>;
  /** The rows of a table (by CSS selector) that have a cell reading exactly `name`. */
  row(table: string, name: string): ReturnType<Page["locator"]>;
}

/**
 * Registers the hooks of a console suite in the calling describe(): Chromium, a page signed in
 * with the management key (clipboard allowed: the copy buttons are tested), and after every
 * passing test no script error, CSP refusal or failed load left (a test that asks for a refusal
 * takes its one line off `errors` itself).
 */
export function useConsole(h: Harness): ConsoleSession {
  const s = { errors: [] as string[] } as ConsoleSession;
  before(async () => {
    s.browser = await launchChromium();
    s.context = await s.browser.newContext({
      viewport: { width: 1440, height: 900 },
      locale: "en-US",
    });
    await s.context.grantPermissions(["clipboard-read", "clipboard-write"], {
      origin: h.baseUrl(),
    });
    s.page = await s.context.newPage();
    recordErrors(s.page, s.errors);
    await s.page.goto(`${h.baseUrl()}/console`);
    await s.page.getByLabel("Management key").fill(MANAGEMENT_KEY);
    await s.page.getByRole("button", { name: "Sign in" }).click();
    await s.page.locator("#admin").waitFor({ state: "visible" });
  });
  after(async () => {
    await s.browser?.close();
  });
  afterEach(function () {
    if (this.currentTest?.state === "passed") expect(s.errors.splice(0)).to.deep.equal([]);
  });
  s.open = async (view) => {
    const link = s.page
      .getByRole("navigation", { name: "Sections" })
      .getByRole("link", { name: view, exact: true });
    await link.click();
    // The click changes the hash; the view switches on the hashchange event that follows, so a
    // caller waiting for something already in the DOM could otherwise look at the previous view.
    await link.and(s.page.locator('[aria-current="page"]')).waitFor();
  };
  s.row = (table, name) =>
    s.page
      .locator(`${table} tbody tr`)
      .filter({ has: s.page.getByRole("cell", { name, exact: true }) });
  return s;
}
