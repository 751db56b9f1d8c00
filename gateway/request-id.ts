import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { HTTP_LIMITS } from "../domain/limits.js";

/**
 * What an incoming X-Request-Id may be to be kept: short, and only characters that are safe in a
 * log line, a header and gRPC metadata. Anything else (too long, spaces, quotes, control
 * characters) is not an error for the client: it gets a fresh id instead, so a hostile value
 * never reaches a log.
 */
const VALID_REQUEST_ID = new RegExp(`^[A-Za-z0-9._-]{1,${HTTP_LIMITS.requestIdMaxChars}}$`);

/** The request's id: the client's own X-Request-Id when valid, else a new UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && VALID_REQUEST_ID.test(given) ? given : randomUUID();
}
