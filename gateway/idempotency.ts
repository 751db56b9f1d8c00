import { hash } from "node:crypto";
import type { ServerResponse } from "node:http";
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  idempotencyKeyProblem,
} from "../domain/idempotency.js";
import { IdempotencyKeyState } from "../gen/railgate/account/v1/account_service_pb.js";
import { componentLogger } from "../platform/observability/logger.js";
import type { Handler, RequestContext, Route } from "./context.js";
import { errorReply, HttpError } from "./http-error.js";
import { errorBodyText, readBody, sendJsonText } from "./http-io.js";

const log = componentLogger("gateway");

/** The first answer to a request made with an Idempotency-Key, as the client read it. */
interface IdempotentAnswer {
  status: number;
  body: string;
}

const WRITE_METHODS: ReadonlySet<string> = new Set(["POST", "PATCH", "PUT", "DELETE"]);

/**
 * Whether a route's method takes an Idempotency-Key: the management writes of the API
 * (workspaces, keys, guardrails, assignments, webhooks, credits). Speech is not one: its answer
 * is a stream, and a retry is a new generation.
 */
export function takesIdempotencyKey(route: Route, method: string): boolean {
  return (
    route.access === "management" &&
    WRITE_METHODS.has(method) &&
    route.pattern.startsWith("/api/v1/")
  );
}

/** What identifies a request under its key: method, path and body bytes. */
export function requestFingerprint(method: string, path: string, body: Buffer): string {
  return hash("sha256", Buffer.concat([Buffer.from(`${method} ${path}\n`), body]), "hex");
}

function replay(res: ServerResponse, answer: IdempotentAnswer): void {
  sendJsonText(res, answer.status, answer.body, { [IDEMPOTENT_REPLAYED_HEADER]: "true" });
}

/**
 * Holds back the answer a handler writes (every management answer is one writeHead and one end
 * of a JSON text), so it is stored before the client reads it: a client that has its answer and
 * sends the request again gets it replayed, never a 409. `send` restores the response and writes
 * what was held.
 */
function holdAnswer(res: ServerResponse): {
  held(): IdempotentAnswer | undefined;
  send(): void;
} {
  const { writeHead, end } = res;
  let head: unknown[] | undefined;
  let body: string | Buffer | undefined;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    head = args;
    return this;
  } as ServerResponse["writeHead"];
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    const chunk = args[0];
    body = typeof chunk === "string" || Buffer.isBuffer(chunk) ? chunk : "";
    return this;
  } as ServerResponse["end"];
  const restore = () => {
    res.writeHead = writeHead;
    res.end = end;
  };
  return {
    held: () =>
      head && body !== undefined ? { status: head[0] as number, body: body.toString() } : undefined,
    send() {
      restore();
      if (head) (writeHead as (...a: unknown[]) => ServerResponse).apply(res, head);
      if (body !== undefined) res.end(body);
    },
  };
}

/**
 * Runs a management write under its Idempotency-Key, if it has one: the first request with a key
 * claims it (AccountService keeps the claims and answers in the services' store, per caller),
 * runs, and stores its answer before sending it; a repeat (same caller, key, method, path and
 * body) within 24 h gets that answer again with Idempotent-Replayed and changes nothing. The
 * same key on another request is a 422; on one still running, a 409. The key also goes on to
 * the service, whose credit top-up applies once per key by itself. An answer a retry may get
 * otherwise (a 5xx, a client that went away before an answer) is not stored: the claim is
 * freed, and a retry runs again.
 */
export async function runIdempotently(
  ctx: RequestContext,
  method: string,
  path: string,
  handler: Handler,
): Promise<void> {
  const key = ctx.req.headers[IDEMPOTENCY_KEY_HEADER];
  if (key === undefined) return handler(ctx);
  const problem = idempotencyKeyProblem(key);
  if (problem !== undefined || typeof key !== "string")
    throw new HttpError(400, problem ?? "Idempotency-Key must be sent once");
  ctx.call.headers = { ...ctx.call.headers, [IDEMPOTENCY_KEY_HEADER]: key };
  const accounts = ctx.clients.accounts;

  const fingerprint = requestFingerprint(method, path, await readBody(ctx.req, ctx.maxBodyBytes));
  const claim = await accounts.claimIdempotencyKey({ fingerprint }, ctx.call);
  if (claim.state !== IdempotencyKeyState.CLAIMED && claim.fingerprint !== fingerprint) {
    throw new HttpError(
      422,
      "Idempotency-Key was already used with another request (method, path or body): use a new key for a new request",
    );
  }
  if (claim.state === IdempotencyKeyState.IN_PROGRESS) {
    throw new HttpError(
      409,
      "Idempotency-Key is in use by a request still in progress: retry once it has been answered",
      { "retry-after": "1" },
    );
  }
  if (claim.state === IdempotencyKeyState.DONE) {
    replay(ctx.res, { status: claim.status, body: claim.body });
    return;
  }

  const response = holdAnswer(ctx.res);
  let failure: unknown;
  let answer: IdempotentAnswer | undefined;
  try {
    await handler(ctx);
    answer = response.held();
  } catch (err) {
    failure = err;
    const reply = errorReply(err);
    // A client error is the request's answer; a server error or a cut request may go otherwise.
    if (reply.status < 500 && !ctx.signal.aborted) {
      answer = {
        status: reply.status,
        body: errorBodyText(reply.status, reply.message, reply.metadata),
      };
    }
  }
  // Not on the request's signal: the claim is settled even when its client has gone.
  const settle = { headers: ctx.call.headers };
  try {
    if (answer) await accounts.completeIdempotencyKey({ token: claim.token, ...answer }, settle);
    else await accounts.releaseIdempotencyKey({ token: claim.token }, settle);
  } catch (err) {
    // The write is done: its answer goes out; a retry runs again once the claim expires.
    log.warn(
      { err: err instanceof Error ? err.message : String(err), path },
      "could not store an Idempotency-Key answer: a retry runs again once the claim expires",
    );
  } finally {
    // The answer the handler wrote (an error is written by the caller, from `failure`).
    response.send();
  }
  if (failure !== undefined) throw failure;
}
