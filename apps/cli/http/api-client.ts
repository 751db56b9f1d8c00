import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";

/**
 * The gateway's public HTTP API as the CLI calls it: Node's own fetch (undici), the key as a
 * bearer token. Refusals keep the API's words: `[<status> <reason>] <the API's message>`.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(`[${status} ${STATUS_CODES[status] ?? "Error"}] ${message}`);
  }
}

/** The gateway could not be reached or answered something that is not the API's. */
export class TransportError extends Error {}

export interface ApiRequest {
  method: string;
  /** The route's path with its parameters filled in, e.g. /api/v1/keys/abc. */
  path: string;
  query?: URLSearchParams;
  body?: unknown;
  /** The write's Idempotency-Key: the same on a retry of the same request; fresh by default. */
  idempotencyKey?: string;
}

const WRITE_METHODS: ReadonlySet<string> = new Set(["POST", "PATCH", "PUT", "DELETE"]);
const SPEECH_PATH = "/api/v1/audio/speech";

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly key: string | undefined,
  ) {}

  /** The raw response of a successful call (speech streams its body); refusals throw ApiError. */
  async send(req: ApiRequest): Promise<Response> {
    const url = new URL(this.baseUrl);
    // A base URL with a path prefix (a gateway behind a proxy at /railgate) keeps it.
    url.pathname = `${url.pathname.replace(/\/$/, "")}${req.path}`;
    if (req.query) url.search = req.query.toString();
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    if (req.body !== undefined) headers["content-type"] = "application/json";
    // Each write carries a fresh Idempotency-Key: a request that reaches the gateway twice (a
    // proxy's retry) applies once. Speech takes none.
    if (WRITE_METHODS.has(req.method) && req.path !== SPEECH_PATH)
      headers["idempotency-key"] = req.idempotencyKey ?? randomUUID();
    let res: Response;
    try {
      res = await fetch(url, {
        method: req.method,
        headers,
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new TransportError(
        `cannot reach ${url.origin}: ${cause?.code ?? cause?.message ?? (err as Error).message}`,
      );
    }
    if (res.ok) return res;
    throw new ApiError(res.status, await errorMessage(res));
  }

  /** A JSON call: the API's answer, parsed. */
  async json(req: ApiRequest): Promise<unknown> {
    const res = await this.send(req);
    const text = await res.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new TransportError(
        `${req.method} ${req.path} answered ${res.status} with a body that is not JSON (is ${this.baseUrl} a Railgate gateway?)`,
      );
    }
  }
}

/** The API's own message from its error envelope, else what the body says (a proxy's page). */
async function errorMessage(res: Response): Promise<string> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof body.error?.message === "string") return body.error.message;
  } catch {
    // Not the API's envelope: fall through to the text itself.
  }
  const line = text.trim().split("\n")[0] ?? "";
  return line ? line.slice(0, 200) : "(no message)";
}
