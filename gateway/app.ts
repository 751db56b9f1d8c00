import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { RailgateConfig } from "../platform/config.js";
import { InFlight } from "../platform/in-flight.js";
import { componentLogger } from "../platform/logger.js";
import { quote } from "../platform/quote.js";
import { REGION_NAMES, type RegionName } from "../platform/regions.js";
import { REQUEST_ID_HEADER } from "../platform/request-id.js";
import { injectTraceHeaders } from "../platform/tracing.js";
import { type Exchange, trackExchange } from "./access-log.js";
import { authenticate } from "./auth.js";
import type { ServiceClients } from "./clients.js";
import type { RequestContext, Route } from "./context.js";
import { Cors } from "./cors.js";
import { errorReply } from "./http-error.js";
import { answerClientError, sendError } from "./http-io.js";
import { KeyCache } from "./key-cache.js";
import { requestIdOf } from "./request-id.js";
import { parseRequestTarget } from "./request-target.js";
import { Router } from "./router.js";
import { routes as defaultRoutes } from "./routes.js";
import { withRequestSpan } from "./tracing.js";

const log = componentLogger("gateway");

export interface GatewayOptions {
  clients: ServiceClients;
  maxBodyBytes: number;
  maxSpeechBodyBytes: number;
  routes?: Route[];
  keyCache?: KeyCache;
  /** CORS_ORIGINS: browser origins allowed ("*" = any); empty or absent = no CORS headers. */
  corsOrigins?: readonly string[];
}

/** The request handler of one regional listener (build() vs listen(): tests use both). */
export function buildGateway(region: RegionName, options: GatewayOptions) {
  const router = new Router(options.routes ?? defaultRoutes);
  const cors = new Cors(options.corsOrigins ?? [], router);
  return (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const exchange = trackExchange(req, res, region);
    return withRequestSpan(req, res, region, exchange, () => serve(req, res, exchange));
  };

  async function serve(req: IncomingMessage, res: ServerResponse, exchange: Exchange) {
    const abort = new AbortController();
    // Only a response that did not finish means the client went away: aborting
    // every finished one too cost a DOMException and an abort event per request.
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    try {
      const { path, url } = parseRequestTarget(req.url ?? "/");
      if (cors.handle(req, res, path)) return;
      const match = router.match(req.method ?? "GET", path);
      if (match.kind === "not-found") {
        sendError(res, 404, `No route for ${quote(path)}`);
        return;
      }
      if (match.kind === "method-not-allowed") {
        sendError(res, 405, `Method ${req.method} not allowed; use ${match.allow.join(", ")}`, {
          allow: match.allow.join(", "),
        });
        return;
      }
      const callHeaders: Record<string, string> = { [REQUEST_ID_HEADER]: exchange.id };
      // The request's trace goes on into the gRPC hop (traceparent metadata).
      injectTraceHeaders(callHeaders);
      const ctx: RequestContext = {
        req,
        res,
        url,
        params: match.params,
        region,
        clients: options.clients,
        maxBodyBytes: options.maxBodyBytes,
        maxSpeechBodyBytes: options.maxSpeechBodyBytes,
        keyCache: options.keyCache,
        signal: abort.signal,
        call: { signal: abort.signal, headers: callHeaders },
      };
      exchange.route = match.route.pattern;
      await authenticate(ctx, match.route.access);
      exchange.keyHash = ctx.key?.hash;
      await match.handler(ctx);
      // A management change made here is visible to the next request here at once, without
      // waiting for its invalidation to come back over the stream.
      if (match.route.access === "management" && req.method !== "GET") options.keyCache?.clear();
    } catch (err) {
      const reply = errorReply(err);
      if (reply.status >= 500)
        log.error({ err, url: req.url?.slice(0, 200), requestId: exchange.id }, "request failed");
      sendError(res, reply.status, reply.message, reply.headers, reply.metadata);
    }
  }
}

export interface RunningGateway {
  ports: Record<RegionName, number>;
  /**
   * Stops accepting connections and requests at once (a request arriving on an open
   * connection gets 503 with Connection: close); requests in progress, speech streams above
   * all, may finish within `graceMs` (default 0); then every connection is closed.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/** node:http limits of each listener (HTTP_* in the configuration). */
export type HttpLimits = RailgateConfig["http"];

const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 1_000,
};

/** One listener per region, as regional load balancers would front one deployment. */
export async function startGateway(
  ports: Record<RegionName, number>,
  host: string,
  options: GatewayOptions & { http?: HttpLimits },
): Promise<RunningGateway> {
  const limits = options.http ?? DEFAULT_HTTP_LIMITS;
  const servers: [RegionName, Server][] = [];
  const bound = {} as Record<RegionName, number>;
  const keyCache = options.keyCache ?? new KeyCache(options.clients.accounts);
  keyCache.start();
  const withCache = { ...options, keyCache };
  const inFlight = new InFlight();
  let draining = false;
  for (const region of REGION_NAMES) {
    const handle = buildGateway(region, withCache);
    const server = createServer(
      {
        // A client must send its headers within this (idle sockets included: Node counts from
        // the connection), and its whole request, body included, within requestTimeout. The
        // response (a long speech stream) is not limited by either.
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        keepAliveTimeout: limits.keepAliveTimeoutMs,
        // Node checks those time-outs only this often (30 s by default): check every second.
        connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
      },
      (req, res) => {
        if (draining) {
          res.setHeader("connection", "close");
          res.setHeader("x-request-id", requestIdOf(req));
          sendError(res, 503, "Service unavailable: this instance is shutting down", {
            "retry-after": "1",
          });
          return;
        }
        res.once("close", inFlight.enter());
        void handle(req, res);
      },
    );
    // Beyond this many open connections, new ones are closed at once: idle sockets can never
    // exhaust the process's file descriptors.
    server.maxConnections = limits.maxConnections;
    server.on("clientError", answerClientError);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(ports[region], host, () => resolve());
    });
    bound[region] = (server.address() as AddressInfo).port;
    servers.push([region, server]);
  }
  return {
    ports: bound,
    close: async ({ graceMs = 0 } = {}) => {
      draining = true;
      // No new connections; idle keep-alive connections are closed now (Node 19+).
      const closed = servers.map(
        ([, s]) => new Promise<void>((resolve) => s.close(() => resolve())),
      );
      await inFlight.idle(graceMs);
      for (const [, s] of servers) s.closeAllConnections();
      await Promise.all(closed);
      keyCache.close();
    },
  };
}
