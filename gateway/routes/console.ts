import { readFile } from "node:fs/promises";
import type { RequestContext, Route } from "../context.js";

/**
 * The console's files live in the repository's console/ folder, next to dist/: tsc does not copy
 * them, so the Dockerfile ships the folder itself. From dist/gateway/routes/ that is ../../../.
 */
const CONSOLE_DIR = new URL("../../../console/", import.meta.url);

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

/** A fixed list: no path from the URL ever reaches the file system. */
const FILES = {
  "index.html": "text/html; charset=utf-8",
  "console.js": "text/javascript; charset=utf-8",
  "api.js": "text/javascript; charset=utf-8",
  "guardrail-form.js": "text/javascript; charset=utf-8",
  "console.css": "text/css; charset=utf-8",
} as const;
type ConsoleFile = keyof typeof FILES;

/** Read once: the files are part of the build, not content that changes while running. */
const cache = new Map<ConsoleFile, Buffer>();

async function serve(ctx: RequestContext, name: ConsoleFile): Promise<void> {
  let body = cache.get(name);
  if (!body) {
    body = await readFile(new URL(name, CONSOLE_DIR));
    cache.set(name, body);
  }
  ctx.res.writeHead(200, {
    "content-type": FILES[name],
    "content-length": body.length,
    "content-security-policy": CONSOLE_CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    // A new build may change any of them; the management key is never in them.
    "cache-control": "no-cache",
  });
  ctx.res.end(body);
}

function asset(name: Exclude<ConsoleFile, "index.html">, summary: string): Route {
  return {
    pattern: `/console/${name}`,
    access: "public",
    methods: { GET: (ctx) => serve(ctx, name) },
    docs: { GET: { summary, status: 200, produces: "asset" } },
  };
}

/** The admin console and speech playground: static files that call /api/v1 from the browser. */
export const consoleRoutes: Route[] = [
  {
    pattern: "/console",
    access: "public",
    methods: { GET: (ctx) => serve(ctx, "index.html") },
    docs: {
      GET: {
        summary: "Admin console and speech playground (sign in with a management key)",
        status: 200,
        produces: "html",
      },
    },
  },
  asset("console.js", "The console's script (an ES module)"),
  asset("api.js", "The console's API calls (an ES module)"),
  asset("guardrail-form.js", "The console's guardrail form (an ES module)"),
  asset("console.css", "The console's style sheet"),
];
