import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, Server as NetServer } from "node:net";
import type { AudioFormatName } from "../domain/audio-formats.js";
import { isKnownKeyRefusal } from "../domain/auth/key-refusals.js";
import { REGION_NAMES, type RegionName } from "../domain/enums.js";
import {
  CONFIG_DEFAULTS,
  type RailgateConfig,
  type SpeechStreamDeadlines,
} from "../platform/config/config.js";
import { InFlight } from "../platform/in-flight.js";
import { listenOn } from "../platform/listen.js";
import { componentLogger } from "../platform/observability/logger.js";
import { injectTraceHeaders } from "../platform/observability/tracing.js";
import { quote } from "../platform/quote.js";
import { REQUEST_ID_HEADER } from "../platform/rpc/request-id.js";
import { type Exchange, trackExchange } from "./access-log.js";
import { authenticate } from "./auth.js";
import type { ServiceClients } from "./clients.js";
import { ConnectionGuard } from "./connection-guard.js";
import type { RequestContext, Route } from "./context.js";
import { Cors } from "./cors.js";
import { logFailedRequest } from "./failure-log.js";
import { FreshConnections } from "./fresh-connections.js";
import { errorReply } from "./http-error.js";
import { answerClientError, sendError } from "./http-io.js";
import { runIdempotently, takesIdempotencyKey } from "./idempotency.js";
import { canonicalParams, canonicalQuery } from "./json/ids.js";
import { KeyCache } from "./key-cache.js";
import { requestIdOf } from "./request-id.js";
import { parseRequestTarget, urlOf } from "./request-target.js";
import { Router } from "./router.js";
import { routes as defaultRoutes } from "./routes.js";
import { withRequestSpan } from "./tracing.js";

const log = componentLogger("gateway");

/**
 * Why a request's signal aborts when its client goes away: one shared reason (an abort without
 * one builds a DOMException, with its stack, per request).
 */
export const CLIENT_GONE: Error = new Error("the client went away");

export interface GatewayOptions {
  clients: ServiceClients;
  maxBodyBytes: number;
  maxSpeechBodyBytes: number;
  /** RAILGATE_SPEECH_DEFAULT_FORMAT (default pcm). */
  speechDefaultFormat?: AudioFormatName;
  /** RAILGATE_SPEECH_FIRST_MESSAGE_TIMEOUT_MS and RAILGATE_SPEECH_IDLE_TIMEOUT_MS. */
  speechStream: SpeechStreamDeadlines;
  routes?: Route[];
  keyCache?: KeyCache;
  /** RAILGATE_CORS_ORIGINS: browser origins allowed ("*" = any); empty or absent = no CORS headers. */
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
    // The request's only AbortController: every service call runs on its signal (see
    // RequestContext.signal).
    const abort = new AbortController();
    // Only a response that did not finish means the client went away: aborting
    // every finished one too cost an abort event per request.
    res.on("close", () => {
      if (!res.writableFinished) abort.abort(CLIENT_GONE);
    });
    try {
      const target = parseRequestTarget(req.url ?? "/");
      const path = target.path;
      if (target.url) canonicalQuery(target.url.searchParams);
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
        // Built on first use: most requests have no query and their handlers never look.
        get url() {
          return urlOf(target);
        },
        // UUIDs in the path and the query's id parameters: any case in, lower case on.
        params: canonicalParams(match.params),
        region,
        clients: options.clients,
        maxBodyBytes: options.maxBodyBytes,
        maxSpeechBodyBytes: options.maxSpeechBodyBytes,
        speechDefaultFormat: options.speechDefaultFormat ?? "pcm",
        speechStream: options.speechStream,
        keyCache: options.keyCache,
        signal: abort.signal,
        abort: (reason) => abort.abort(reason),
        call: { signal: abort.signal, headers: callHeaders },
      };
      exchange.route = match.route.pattern;
      try {
        await authenticate(ctx, match.route.access);
      } catch (err) {
        // A refused speech request of a known key goes on to the service, which logs it.
        if (!match.route.logsKeyRefusals || !isKnownKeyRefusal(err)) throw err;
        ctx.keyRefusal = err;
      }
      exchange.keyHash = ctx.key?.hash;
      const method = req.method ?? "GET";
      if (takesIdempotencyKey(match.route, method)) {
        await runIdempotently(ctx, method, path, match.handler);
      } else {
        await match.handler(ctx);
      }
      // A management change made here is visible to the next request here at once, without
      // waiting for its invalidation to come back over the stream.
      if (match.route.access === "management" && req.method !== "GET") options.keyCache?.clear();
    } catch (err) {
      const reply = errorReply(err);
      if (reply.status >= 500) {
        logFailedRequest(err, {
          status: reply.status,
          url: req.url,
          requestId: exchange.id,
          clientGone: abort.signal.reason === CLIENT_GONE,
        });
      }
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

/** node:http limits of each listener (RAILGATE_HTTP_* in the configuration). */
export type HttpLimits = RailgateConfig["http"];

/** The setting that chooses each region's listener port (platform/config/config.ts). */
const PORT_VARIABLES: Record<RegionName, string> = {
  global: "RAILGATE_GATEWAY_PORT",
  europe: "RAILGATE_GATEWAY_EU_PORT",
  us: "RAILGATE_GATEWAY_US_PORT",
};

/** One listener per region, as regional load balancers would front one deployment. */
export async function startGateway(
  ports: Record<RegionName, number>,
  host: string,
  options: GatewayOptions & { http?: HttpLimits },
): Promise<RunningGateway> {
  const limits = options.http ?? CONFIG_DEFAULTS.http;
  const servers: [RegionName, Server][] = [];
  const bound = {} as Record<RegionName, number>;
  const keyCache = options.keyCache ?? new KeyCache(options.clients.accounts);
  keyCache.start();
  const withCache = { ...options, keyCache };
  const inFlight = new InFlight();
  let draining = false;
  const connections = new FreshConnections();
  for (const region of REGION_NAMES) {
    const handle = buildGateway(region, withCache);
    const guard = new ConnectionGuard(limits);
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
        guard.requestStarted(res);
        const reused = connections.requestArrived(req.socket);
        if (draining) {
          res.setHeader("connection", "close");
        }
        // A connection accepted before the listener closed, whose first request arrives during
        // the drain, is served (and closed after): its client (or a TCP balancer) had no way to
        // know, and cannot safely retry a POST that got a 503. A keep-alive client reusing an
        // older connection is told to go elsewhere instead; one request per connection either
        // way, so the drain stays bounded.
        if (draining && reused) {
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
    // The connection caps (RAILGATE_HTTP_MAX_CONNECTIONS, RAILGATE_HTTP_MAX_CONNECTIONS_PER_ADDRESS): idle sockets
    // can never exhaust the process's file descriptors, nor lock other clients out.
    guard.attach(server);
    connections.attach(server);
    server.on("clientError", answerClientError);
    try {
      await listenOn(server, ports[region], host, PORT_VARIABLES[region]);
    } catch (err) {
      // The listeners already bound would otherwise hold their ports past a refused start.
      for (const [, s] of servers) s.close();
      keyCache.close();
      throw err;
    }
    // Once listening, an error is a failed accept (EMFILE when a flood outruns the file
    // descriptors): the listener goes on accepting, so it is a warning, not a crash.
    let lastAcceptWarning = 0;
    server.on("error", (err) => {
      if (Date.now() - lastAcceptWarning < 10_000) return;
      lastAcceptWarning = Date.now();
      log.warn({ region, reason: err.message }, "accept failed (logged at most every 10 s)");
    });
    bound[region] = (server.address() as AddressInfo).port;
    servers.push([region, server]);
  }
  return {
    ports: bound,
    close: async ({ graceMs = 0 } = {}) => {
      draining = true;
      const startedAt = Date.now();
      // No new connections (net.Server's close: http.Server's would also close, at once, the
      // connections accepted whose request has not arrived yet: see FreshConnections).
      const closed = servers.map(
        ([, s]) =>
          new Promise<void>((resolve) => NetServer.prototype.close.call(s, () => resolve())),
      );
      // A connection accepted before the drain gets what any connection gets to send its
      // headers (RAILGATE_HTTP_HEADERS_TIMEOUT_MS), within the grace: a silent one cannot hold the drain.
      await connections.settled(Math.min(graceMs, limits.headersTimeoutMs));
      // Then the idle keep-alive connections go; those in use close after their response.
      for (const [, s] of servers) s.closeIdleConnections();
      await inFlight.idle(graceMs - (Date.now() - startedAt));
      // One line for every request the shutdown cuts (streams above all), not one per request.
      if (inFlight.size > 0) {
        log.warn({ requests: inFlight.size, graceMs }, "shutdown: cutting requests in progress");
      }
      for (const [, s] of servers) s.closeAllConnections();
      await Promise.all(closed);
      keyCache.close();
    },
  };
}
