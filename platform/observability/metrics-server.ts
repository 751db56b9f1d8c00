import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { listenOn } from "../listen.js";
import { registry } from "./metrics.js";

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

function reply(res: ServerResponse, status: number, message: string, headers = {}): void {
  const body = JSON.stringify({ error: { code: status, message } });
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(body);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? "/").split("?")[0];
  if (path === "/livez" && (req.method === "GET" || req.method === "HEAD")) {
    // Liveness from the event loop alone (as the gateway's /livez and gRPC health "liveness").
    res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
    res.end(req.method === "HEAD" ? undefined : '{"status":"ok"}');
    return;
  }
  if (path !== "/metrics") {
    return reply(res, 404, "Only /metrics and /livez are served on the metrics port");
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    return reply(res, 405, `Method ${req.method} not allowed; use GET`, { allow: "GET, HEAD" });
  }
  const body = await registry.metrics();
  res.writeHead(200, {
    "content-type": registry.contentType,
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  res.end(req.method === "HEAD" ? undefined : body);
}

/**
 * GET /metrics of this process's registry on a port of its own (RAILGATE_METRICS_PORT), without a key
 * (and GET /livez, a liveness answer from the event loop):
 * bind it where only the scraper reaches it, as the gRPC ports. The gateway listeners serve the
 * same registry behind the management key (gateway/metrics.ts).
 */
export async function startMetricsServer(port: number, host: string): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    handle(req, res).catch(() => reply(res, 500, "Internal server error"));
  });
  await listenOn(server, port, host, "RAILGATE_METRICS_PORT");
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
