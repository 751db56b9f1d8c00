import { Agent } from "undici";
import { signatureHeader, WEBHOOK_SIGNATURE_HEADER } from "./webhook-signature.js";

/** What went wrong with an attempt, as a kind: never an address or the network stack's message. */
export type DeliveryErrorKind =
  | "timeout"
  | "connection_refused"
  | "dns"
  | "tls"
  | "connection_reset"
  | "redirect"
  | "http_status"
  | "network";

export type AttemptResult =
  | { ok: true; statusCode: number }
  | { ok: false; statusCode: number | null; error: DeliveryErrorKind };

export interface DeliveryRequest {
  url: string;
  secret: string;
  /** The event JSON exactly as stored: what is signed is what is sent. */
  body: string;
  eventId: string;
  eventType: string;
  deliveryId: string;
  /** Sent as X-Request-Id and logged, so a receiver's logs join ours. */
  requestId: string;
  /** Unix seconds of the signature. */
  timestamp: number;
}

/** An answer's body is read at most this far (then dropped): receivers have nothing to tell us. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** The network error codes we tell apart, walked down `cause` chains (undici wraps them). */
function errorKind(err: unknown): DeliveryErrorKind {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const { code, name } = e as { code?: unknown; name?: unknown };
    if (name === "AbortError" || name === "TimeoutError") return "timeout";
    if (typeof code === "string") {
      if (code === "ECONNREFUSED") return "connection_refused";
      if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "dns";
      if (code.includes("TIMEOUT") || code === "ETIMEDOUT") return "timeout";
      if (code === "ECONNRESET" || code === "EPIPE" || code === "UND_ERR_SOCKET")
        return "connection_reset";
      if (code.startsWith("ERR_TLS") || code.startsWith("ERR_SSL") || code.includes("CERT"))
        return "tls";
    }
    e = (e as { cause?: unknown }).cause;
  }
  return "network";
}

/**
 * POSTs signed events. Redirects are never followed (a 3xx is a failed
 * attempt of kind "redirect"), so an event can never be steered to another
 * host; each attempt has one deadline for connecting, the answer's head and
 * its body. Connections are pooled per origin by the agent.
 */
export class DeliveryClient {
  private readonly agent: Agent;

  constructor(private readonly timeoutMs: number) {
    this.agent = new Agent({
      connect: { timeout: timeoutMs },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      // Keep-alive stays short: receivers are many and mostly idle.
      keepAliveTimeout: 4_000,
    });
  }

  async send(req: DeliveryRequest): Promise<AttemptResult> {
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return { ok: false, statusCode: null, error: "network" };
    }
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      const res = await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "Railgate-Webhooks/1",
          [WEBHOOK_SIGNATURE_HEADER]: signatureHeader(req.secret, req.timestamp, req.body),
          "railgate-event-id": req.eventId,
          "railgate-event-type": req.eventType,
          "railgate-delivery-id": req.deliveryId,
          "x-request-id": req.requestId,
        },
        body: req.body,
        signal,
      });
      // Drain a little of the answer so the connection can be reused; never keep it.
      await res.body.dump({ limit: MAX_ANSWER_BYTES }).catch(() => undefined);
      if (res.statusCode >= 200 && res.statusCode < 300)
        return { ok: true, statusCode: res.statusCode };
      const error = res.statusCode >= 300 && res.statusCode < 400 ? "redirect" : "http_status";
      return { ok: false, statusCode: res.statusCode, error };
    } catch (err) {
      return { ok: false, statusCode: null, error: signal.aborted ? "timeout" : errorKind(err) };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
