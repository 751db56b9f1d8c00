import { HTTP_LIMITS } from "../domain/limits.js";
import { quote } from "../platform/quote.js";
import { HttpError } from "./http-error.js";

/** RFC 3986 path characters (pchar and "/"): anything else must arrive percent-encoded. */
const PATH_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;

/** A "." or ".." segment, also percent-encoded (%2e). */
const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

export interface RequestTarget {
  /** The path exactly as sent: the router matches it segment by segment. */
  path: string;
  /**
   * The same target parsed, for its query parameters; absent when there is no query (most
   * requests): `urlOf` builds it when a handler asks.
   */
  url?: URL;
}

const BASE = "http://gateway";

/** The target's URL: its own when it has a query, else one built from the (checked) path. */
export function urlOf(target: RequestTarget): URL {
  target.url ??= new URL(target.path, BASE);
  return target.url;
}

/**
 * Reads the request target as the path the client sent and nothing else. The
 * WHATWG URL parser would read "//host/api/v1/keys" as a host plus the path
 * "/api/v1/keys", resolve "/a/../b" to "/b" and turn "\" into "/", so a
 * request could reach a route other than the one its path names; "//[" even
 * made it throw (500). Only origin-form targets ("/path?query") are served:
 * the gateway is not a proxy, so absolute-form ("http://x/...") and "*" are 400.
 */
export function parseRequestTarget(raw: string): RequestTarget {
  if (raw.length > HTTP_LIMITS.targetMaxChars) {
    throw new HttpError(
      414,
      `Request target too long: at most ${HTTP_LIMITS.targetMaxChars} characters`,
    );
  }
  const q = raw.indexOf("?");
  const path = q === -1 ? raw : raw.slice(0, q);
  if (!path.startsWith("/") || path.startsWith("//")) {
    throw new HttpError(
      400,
      `Request target must be a path starting with a single "/", got ${quote(raw)}`,
    );
  }
  if (!PATH_CHARS.test(path)) {
    throw new HttpError(
      400,
      `Request path has characters that must be percent-encoded: ${quote(path)}`,
    );
  }
  if (DOT_SEGMENT.test(path)) {
    throw new HttpError(400, `Request path must not have "." or ".." segments: ${quote(path)}`);
  }
  // A path that passed the checks above always parses: only a query can fail.
  if (q === -1) return { path };
  try {
    return { path, url: new URL(raw, BASE) };
  } catch {
    throw new HttpError(400, `Request target is not a valid URL path: ${quote(raw)}`);
  }
}
