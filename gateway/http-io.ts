import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { quote } from "../platform/quote.js";
import { HttpError } from "./http-error.js";
import { canonicalBodyIds } from "./json/ids.js";

/**
 * Reads a JSON object body: Content-Type must be application/json, the size is
 * capped (413 beyond, counted while streaming so a huge body is never held),
 * and malformed JSON is a 400.
 */
export async function readJsonObject(
  req: IncomingMessage,
  maxBytes: number,
): Promise<Record<string, unknown>> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") {
    throw new HttpError(415, `Content-Type must be application/json, got ${quote(type || "none")}`);
  }
  const text = (await readBody(req, maxBytes)).toString("utf8");
  if (text.trim() === "") throw new HttpError(400, "Request body is empty: send a JSON object");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // V8 quotes a piece of the input in its message: keep it short.
    const detail = err instanceof SyntaxError ? err.message.slice(0, 200) : "invalid JSON";
    throw new HttpError(400, `Malformed JSON body: ${detail}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new HttpError(400, "Request body must be a JSON object");
  }
  // Only a \u escape makes a lone surrogate (bad UTF-8 bytes decode to U+FFFD): look only then.
  const broken = text.includes("\\u") ? loneSurrogatePath(parsed, "") : undefined;
  if (broken !== undefined) {
    throw new HttpError(
      400,
      `${broken} must be valid Unicode text: it holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape without its pair)`,
    );
  }
  // Ids arrive in either case (RFC 4122) and go on in the case they are stored in.
  return canonicalBodyIds(parsed as Record<string, unknown>);
}

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The path of the first string (value or key) holding a lone surrogate: protobuf strings must be
 * valid UTF-8, so the services would refuse it as an internal error (in process) or store it
 * altered to U+FFFD (over the wire); the client hears which field instead.
 */
function loneSurrogatePath(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return LONE_SURROGATE.test(value) ? path : undefined;
  if (value === null || typeof value !== "object") return undefined;
  for (const [key, child] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (LONE_SURROGATE.test(key)) return path ? `a key of ${path}` : "a key of the body";
    const found = loneSurrogatePath(child, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Bodies already read, so a handler reads what a wrapper read before it (see idempotency.ts). */
const readBodies = new WeakMap<IncomingMessage, Buffer>();

/** A JSON object body that may be left out: none is `{}`; one that is sent must be a JSON object. */
export async function readOptionalJsonObject(
  req: IncomingMessage,
  maxBytes: number,
): Promise<Record<string, unknown>> {
  const raw = await readBody(req, maxBytes);
  return raw.length === 0 ? {} : readJsonObject(req, maxBytes);
}

/**
 * The request's body, at most `maxBytes` (413 beyond, counted while streaming so a huge body is
 * never held). Read once: a second call returns the same bytes.
 */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const read = readBodies.get(req);
  if (read) return read;
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    throw new HttpError(413, `Request body too large: at most ${maxBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      req.resume();
      throw new HttpError(413, `Request body too large: at most ${maxBytes} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  const body = Buffer.concat(chunks);
  readBodies.set(req, body);
  return body;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** sendJson of a body already serialized (`data` is JSON.stringify of the answer). */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  data: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(data),
    ...headers,
  });
  res.end(data);
}

export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  metadata?: Record<string, unknown>,
): void {
  if (res.headersSent) {
    // Mid-stream: the status is gone, so end the body abruptly; the client sees a truncated stream.
    res.destroy();
    return;
  }
  sendJsonText(res, status, errorBodyText(status, message, metadata), headers);
}

/** The error envelope `{ error: { code, message, metadata? } }` as sendError writes it. */
export function errorBodyText(
  status: number,
  message: string,
  metadata?: Record<string, unknown>,
): string {
  const error = metadata ? { code: status, message, metadata } : { code: status, message };
  return JSON.stringify({ error });
}

/** Why node:http refused a request before any handler saw it. */
function clientErrorReply(code: string | undefined): { status: number; message: string } {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return { status: 431, message: "Request target or headers too large" };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, message: "Request not received in time" };
    default:
      return { status: 400, message: "Malformed HTTP request" };
  }
}

/**
 * The server's "clientError" listener: a request node:http cannot parse (a
 * target or headers beyond its limits, bad syntax) still gets the error shape,
 * where node's default answer has no body.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, message } = clientErrorReply(err.code);
  const body = JSON.stringify({ error: { code: status, message } });
  // Written, then destroyed (not just ended): a client that never closes its side (an idle
  // socket timed out by headersTimeout) must not keep the connection, and its file
  // descriptor, half-open. A client that does not even read gets a second at most.
  const bail = setTimeout(() => socket.destroy(), 1_000);
  bail.unref();
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      "content-type: application/json; charset=utf-8\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    () => {
      clearTimeout(bail);
      socket.destroy();
    },
  );
}
