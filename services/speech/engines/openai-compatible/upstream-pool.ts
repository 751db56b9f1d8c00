import { Pool } from "undici";
import type { ProviderConfig } from "../../../../domain/catalog/types.js";

/**
 * How long an idle connection to a provider stays open. Below the usual
 * server keep-alive (Node 5 s, nginx 75 s) would churn handshakes under
 * steady traffic; undici also honours a shorter `Keep-Alive: timeout=` hint
 * from the server, so a provider that closes first never gets a request on a
 * socket it is about to drop.
 */
const KEEP_ALIVE_MS = 30_000;
const KEEP_ALIVE_MAX_MS = 10 * 60_000;

export interface UpstreamPool {
  /** Keep-alive connections to the provider's origin, shared by every request to it. */
  pool: Pool;
  /** Path of `POST /audio/speech` under the provider's base URL (which may carry a prefix like /v1). */
  speechPath: string;
  /** The provider's host and port, for the upstream span's server.address / server.port. */
  host: string;
  port: number;
}

/**
 * One undici Pool per provider: requests reuse warm connections instead of
 * paying a TCP (and TLS) handshake each, and no request goes through the
 * WHATWG fetch layer (Headers, Response, web streams), whose per-request
 * objects were a visible share of the proxy's CPU.
 *
 * The provider's `timeout_ms` is an idle time-out on the provider: connecting,
 * waiting for the response head, and any pause between body bytes. undici
 * stops the body clock while the body is paused by our own backpressure, so a
 * slow consumer on our side is never blamed on the provider.
 */
export function upstreamPool(config: ProviderConfig): UpstreamPool {
  const base = new URL(config.base_url);
  return {
    pool: new Pool(base.origin, {
      // No cap: like fetch's global agent, concurrency is bounded by admission, not here.
      connections: null,
      pipelining: 1,
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MAX_MS,
      connectTimeout: config.timeout_ms,
      headersTimeout: config.timeout_ms,
      bodyTimeout: config.timeout_ms,
    }),
    speechPath: `${base.pathname.replace(/\/+$/, "")}/audio/speech`,
    host: base.hostname,
    port: base.port ? Number(base.port) : base.protocol === "https:" ? 443 : 80,
  };
}
