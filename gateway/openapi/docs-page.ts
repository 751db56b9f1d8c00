import { SCALAR_VERSION } from "./scalar-bundle.js";

/**
 * The /docs page: Scalar's API reference (its bundle served by the gateway from the pinned
 * npm package, see scalar-bundle.ts) reading the document the gateway serves. It shares its
 * origin with /console, whose session storage holds a management key: a script of anyone
 * else's on this page could read it, so the page runs scripts of this origin only and may
 * not be framed.
 */
export const DOCS_ASSETS = "/docs/assets";
/** Versioned: a new Scalar is a new URL, so browsers may cache this one for good. */
export const SCALAR_BUNDLE_PATH = `${DOCS_ASSETS}/scalar-api-reference-${SCALAR_VERSION}.js`;
export const DOCS_SCRIPT_PATH = `${DOCS_ASSETS}/docs.js`;

/**
 * Same origin only, as the console's (gateway/routes/console.ts), but for styles and images:
 * - style-src 'unsafe-inline': Scalar's bundle injects its style sheet as a <style> element at
 *   run time and its components (Vue) set style attributes; no nonce or hash can cover styles
 *   that are computed in the browser. Styles cannot run code; scripts stay 'self' only.
 * - img-src data: for the icons the bundle inlines as data: URLs.
 * No font-src: Scalar's own fonts come from its CDN unless withDefaultFonts is false (it is).
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The headers of every /docs response: the CSP, no framing (older browsers too), no sniffing. */
export const DOCS_HEADERS = {
  "content-security-policy": DOCS_CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
} as const;

/**
 * Scalar's configuration: the reference only. Everything in it that reaches another host is
 * off: telemetry, fonts from Scalar's CDN, the API client ("Test request", which would send the
 * reader's key through Scalar's proxy), the AI agent and MCP features, developer tools.
 */
export function scalarConfiguration(documentUrl: string) {
  return {
    url: documentUrl,
    telemetry: false,
    withDefaultFonts: false,
    hideClientButton: true,
    hideTestRequestButton: true,
    showDeveloperTools: "never",
    agent: { disabled: true },
    mcp: { disabled: true },
    persistAuth: false,
    documentDownloadType: "json",
    // Operations are grouped by tag (a resource each); every group open, so nothing is hidden.
    defaultOpenAllTags: true,
  };
}

/**
 * The page's one script of its own (no inline script: CSP 'self'). It runs before the bundle:
 * Scalar's validation library (zod) probes for eval by calling Function(""), which the CSP
 * refuses (and reports); jitless tells it not to try. It mounts the reference once the bundle
 * has run (DOMContentLoaded comes after every script of the page). Not on an element with the
 * id "api-reference": the bundle mounts a second reference there by itself, with its defaults
 * (fonts from Scalar's CDN among them).
 */
export function docsScript(documentUrl: string): string {
  const configuration = JSON.stringify(scalarConfiguration(documentUrl), null, 2);
  return `// Railgate: mounts Scalar's API reference (${SCALAR_BUNDLE_PATH}) on #reference.
globalThis.__zod_globalConfig = Object.assign(globalThis.__zod_globalConfig ?? {}, { jitless: true });
document.addEventListener("DOMContentLoaded", () => {
  Scalar.createApiReference("#reference", ${configuration.replaceAll("\n", "\n  ")});
});
`;
}

export function docsPage(documentUrl: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Railgate API reference</title>
  </head>
  <body>
    <noscript>The API reference needs JavaScript; the document itself is at <a href="${documentUrl}">${documentUrl}</a>.</noscript>
    <div id="reference"></div>
    <script src="${DOCS_SCRIPT_PATH}"></script>
    <script src="${SCALAR_BUNDLE_PATH}"></script>
  </body>
</html>
`;
}
