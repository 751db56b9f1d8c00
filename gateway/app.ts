import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { componentLogger } from "../services/common/logger.js";
import { quote } from "../services/common/quote.js";
import { authenticate } from "./auth.js";
import type { ServiceClients } from "./clients.js";
import type { RegionName, RequestContext, Route } from "./context.js";
import { errorReply } from "./http-error.js";
import { answerClientError, sendError } from "./http-io.js";
import { KeyCache } from "./key-cache.js";
import { parseRequestTarget } from "./request-target.js";
import { Router } from "./router.js";
import { routes as defaultRoutes } from "./routes.js";

const log = componentLogger("gateway");

export interface GatewayOptions {
  clients: ServiceClients;
  maxBodyBytes: number;
  maxSpeechBodyBytes: number;
  routes?: Route[];
  keyCache?: KeyCache;
}

/** The request handler of one regional listener (build() vs listen(): tests use both). */
export function buildGateway(region: RegionName, options: GatewayOptions) {
  const router = new Router(options.routes ?? defaultRoutes);
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const abort = new AbortController();
    // Only a response that did not finish means the client went away: aborting
    // every finished one too cost a DOMException and an abort event per request.
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    try {
      const { path, url } = parseRequestTarget(req.url ?? "/");
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
        call: { signal: abort.signal },
      };
      await authenticate(ctx, match.route.access);
      await match.handler(ctx);
      // A management change made here is visible to the next request here at once, without
      // waiting for its invalidation to come back over the stream.
      if (match.route.access === "management" && req.method !== "GET") options.keyCache?.clear();
    } catch (err) {
      const reply = errorReply(err);
      if (reply.status >= 500) log.error({ err, url: req.url?.slice(0, 200) }, "request failed");
      sendError(res, reply.status, reply.message, reply.headers);
    }
  };
}

export interface RunningGateway {
  ports: Record<RegionName, number>;
  close(): Promise<void>;
}

/** One listener per region, as regional load balancers would front one deployment. */
export async function startGateway(
  ports: Record<RegionName, number>,
  host: string,
  options: GatewayOptions,
): Promise<RunningGateway> {
  const servers: [RegionName, Server][] = [];
  const bound = {} as Record<RegionName, number>;
  const keyCache = options.keyCache ?? new KeyCache(options.clients.accounts);
  keyCache.start();
  const withCache = { ...options, keyCache };
  for (const region of ["global", "europe", "us"] as const) {
    const server = createServer({ keepAliveTimeout: 65_000 }, buildGateway(region, withCache));
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
    close: async () => {
      keyCache.close();
      await Promise.all(
        servers.map(
          ([, s]) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      );
    },
  };
}
