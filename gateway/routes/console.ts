import { readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { extname } from "node:path";
import { pathToFileURL } from "node:url";
import type { RequestContext, Route } from "../context.js";
import { STATIC_PAGE } from "../route-access.js";

/**
 * The console's files live in the repository's console/ folder, next to dist/: tsc does not copy
 * them, so the Dockerfile ships the folder itself. From dist/gateway/routes/ that is ../../../.
 */
const CONSOLE_DIR = new URL("../../../console/", import.meta.url);

/**
 * The chart library, served from node_modules at the version package.json pins (a production
 * dependency, so the image has it): no CDN, and the CSP stays 'self'. The UMD build is one
 * self-contained classic script (the ES build imports a bare specifier, which a browser cannot
 * resolve without an import map, and an inline import map is what the CSP forbids).
 */
const CHART_JS = new URL(
  "chart.umd.min.js",
  pathToFileURL(createRequire(import.meta.url).resolve("chart.js")),
);

/**
 * Same origin only. `blob:` for media: the playground plays a MediaSource or a Blob through an
 * object URL, which is this page's own and never fetched from elsewhere.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "media-src 'self' blob:",
  "base-uri 'none'",
  // The forms are handled by the script; should it not run, a plain GET submit would put the
  // management key in a URL (history, logs): no form may submit anywhere.
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml; charset=utf-8",
};

/**
 * The folders of console/ that hold served files. Each one's list is read once, at start-up, and
 * becomes one route per file: no path from a request reaches the file system, and a file added
 * while running is not served.
 */
const FOLDERS = ["", "lib/", "views/"] as const;

function listed(folder: string): [string, URL][] {
  const dir = new URL(folder, CONSOLE_DIR);
  return readdirSync(dir)
    .filter((name) => name !== "index.html" && TYPES[extname(name)])
    .sort()
    .map((name) => [`${folder}${name}`, new URL(name, dir)]);
}

/** Read once: the files are part of the build, not content that changes while running. */
const cache = new Map<string, Buffer>();

async function serve(ctx: RequestContext, file: URL): Promise<void> {
  let body = cache.get(file.href);
  if (!body) {
    body = await readFile(file);
    cache.set(file.href, body);
  }
  ctx.res.writeHead(200, {
    "content-type": TYPES[extname(file.pathname)] ?? "application/octet-stream",
    "content-length": body.length,
    "content-security-policy": CONSOLE_CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    // A new build may change any of them; the management key is never in them.
    "cache-control": "no-cache",
  });
  ctx.res.end(body);
}

function fileRoute([name, file]: [string, URL]): Route {
  return {
    pattern: `/console/${name}`,
    access: STATIC_PAGE,
    methods: { GET: (ctx) => serve(ctx, file) },
    docs: { GET: { summary: `The console's ${name}`, status: 200, produces: "asset" } },
  };
}

/** The admin console and speech playground: static files that call /api/v1 from the browser. */
export const consoleRoutes: Route[] = [
  {
    pattern: "/console",
    access: STATIC_PAGE,
    methods: { GET: (ctx) => serve(ctx, new URL("index.html", CONSOLE_DIR)) },
    docs: {
      GET: {
        summary: "Admin console and speech playground (sign in with a management key)",
        status: 200,
        produces: "html",
      },
    },
  },
  {
    pattern: "/console/vendor/chart.umd.min.js",
    access: STATIC_PAGE,
    methods: { GET: (ctx) => serve(ctx, CHART_JS) },
    docs: {
      GET: {
        summary: "The chart library the console draws with (Chart.js, from node_modules)",
        status: 200,
        produces: "asset",
      },
    },
  },
  ...FOLDERS.flatMap(listed).map(fileRoute),
];
