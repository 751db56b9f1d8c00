import type { IncomingMessage, ServerResponse } from "node:http";
import { quote } from "../platform/quote.js";
import { sendError } from "./http-io.js";
import type { Router } from "./router.js";

/** What a browser page may send: the key, a JSON body, and the ids and keys a client may set. */
export const CORS_ALLOWED_HEADERS =
  "authorization, content-type, x-request-id, x-session-id, idempotency-key";

/** Response headers a page may read beyond the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = [
  "X-Generation-Id",
  "Retry-After",
  "X-Request-Id",
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "X-Railgate-Model",
  "X-Railgate-Provider",
  "Idempotent-Replayed",
].join(", ");

/** How long a browser may reuse a preflight answer (seconds; Chromium caps it at 7200). */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * Cross-origin access for browser pages on the origins of RAILGATE_CORS_ORIGINS ("*" = any page).
 * No credentials mode: the API key travels in Authorization, never in a cookie, so a page
 * can only use a key it was given. With no origins configured, nothing here adds a header.
 */
export class Cors {
  private readonly any: boolean;
  private readonly listed: Set<string>;

  constructor(
    origins: readonly string[],
    private readonly router: Router,
  ) {
    this.any = origins.includes("*");
    this.listed = new Set(origins.filter((o) => o !== "*"));
  }

  private get enabled(): boolean {
    return this.any || this.listed.size > 0;
  }

  /** The Access-Control-Allow-Origin value for `origin`, or undefined when it is not allowed. */
  private allowOrigin(origin: string): string | undefined {
    if (this.listed.has(origin)) return origin;
    return this.any ? "*" : undefined;
  }

  /**
   * Runs before routing and authentication (a preflight carries no credential). Answers a
   * preflight itself and returns true; for any other request it sets the CORS headers of the
   * response to come (kept through writeHead, errors included) and returns false.
   */
  handle(req: IncomingMessage, res: ServerResponse, path: string): boolean {
    if (!this.enabled) return false;
    // The answer depends on Origin whenever CORS is on: caches must key on it.
    res.setHeader("vary", "Origin");
    const origin = req.headers.origin;
    if (origin === undefined) return false;
    const allowed = this.allowOrigin(origin);
    const preflight =
      req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
    if (!preflight) {
      if (allowed) {
        res.setHeader("access-control-allow-origin", allowed);
        res.setHeader("access-control-expose-headers", CORS_EXPOSED_HEADERS);
      }
      return false;
    }
    if (!allowed) {
      sendError(res, 403, `Origin ${quote(origin)} is not allowed (RAILGATE_CORS_ORIGINS)`);
      return true;
    }
    const match = this.router.match("OPTIONS", path);
    if (match.kind === "not-found") {
      sendError(res, 404, `No route for ${quote(path)}`);
      return true;
    }
    const methods = match.kind === "found" ? Object.keys(match.route.methods) : match.allow;
    res.writeHead(204, {
      "access-control-allow-origin": allowed,
      "access-control-allow-methods": methods.join(", "),
      "access-control-allow-headers": CORS_ALLOWED_HEADERS,
      "access-control-max-age": String(CORS_MAX_AGE_SECONDS),
    });
    res.end();
    return true;
  }
}
