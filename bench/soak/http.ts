import { randomUUID } from "node:crypto";
import { request } from "node:http";
import type { CallKind, CallObservation } from "./observations.js";

/** Longer than a freeze: a client of a frozen process waits it out, then counts as no answer. */
const TIMEOUT_MS = 30_000;

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** JSON when the body parses, else its text. */
  body: unknown;
  /** The body ended whole. */
  complete: boolean;
}

/**
 * One request on a connection of its own (no pooled socket a killed gateway leaves dead): through
 * the TCP balancer each request is a fresh pick. Never throws: no answer is status 0.
 */
export function send(
  baseUrl: string,
  method: string,
  path: string,
  options: { token: string; body?: unknown; headers?: Record<string, string>; keepBody?: boolean },
): Promise<Answer> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve) => {
    let settled = false;
    const done = (a: Answer) => {
      if (settled) return;
      settled = true;
      resolve(a);
    };
    const req = request(`${baseUrl}${path}`, {
      method,
      agent: false,
      timeout: TIMEOUT_MS,
      headers: {
        authorization: `Bearer ${options.token}`,
        ...(payload === undefined
          ? {}
          : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
        ...options.headers,
      },
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", () => done({ status: 0, headers: {}, body: undefined, complete: false }));
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      // Audio is only counted; JSON (and every refusal) is kept to be read.
      const keep = options.keepBody !== false || status !== 200;
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => {
        if (keep) chunks.push(c);
      });
      const finish = () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: the text is what the check reports
        }
        done({ status, headers: res.headers, body, complete: res.complete });
      };
      res.on("end", finish);
      res.on("error", finish);
      res.on("aborted", finish);
      res.on("close", finish);
    });
    req.end(payload);
  });
}

/** A call as the checks see it: its route, status, refusal body and ids. */
export function observe(
  kind: CallKind,
  route: string,
  answer: Answer,
  extra: Partial<CallObservation> = {},
): CallObservation {
  const header = answer.headers["x-generation-id"];
  return {
    kind,
    route,
    status: answer.status,
    ...(answer.status >= 400 ? { errorBody: answer.body } : {}),
    ...(kind === "speech" && answer.status === 200
      ? { generationId: typeof header === "string" ? header : "", complete: answer.complete }
      : {}),
    ...extra,
  };
}

/** A fresh X-Request-Id: the audit event of a write carries it. */
export function newRequestId(): string {
  return `soak-${randomUUID()}`;
}
