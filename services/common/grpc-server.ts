import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { componentLogger } from "./logger.js";

const log = componentLogger("grpc");

/**
 * Anything that is not a deliberate ConnectError is a bug: log it with its
 * stack here, and hand the caller a generic Internal error so no stack trace
 * or internal detail ever leaves the process.
 */
function hideUnexpected(err: unknown, procedure: string): ConnectError {
  if (err instanceof ConnectError) return err;
  log.error({ err, procedure }, "unexpected error");
  return new ConnectError("Internal server error", Code.Internal);
}

export const errorInterceptor: Interceptor = (next) => async (req) => {
  const procedure = req.url;
  try {
    const res = await next(req);
    if (!res.stream) return res;
    const upstream = res.message;
    async function* guarded() {
      try {
        yield* upstream;
      } catch (err) {
        throw hideUnexpected(err, procedure);
      }
    }
    return { ...res, message: guarded() };
  } catch (err) {
    throw hideUnexpected(err, procedure);
  }
};

export interface RunningServer {
  port: number;
  /**
   * Stops accepting connections and new calls at once; calls in progress may finish within
   * `graceMs` (default 0), then the rest are cancelled.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/** Serves Connect routes over gRPC (HTTP/2 cleartext) so plain grpc-js clients can call them. */
export async function startGrpcServer(
  routes: (router: ConnectRouter) => void,
  port: number,
  host = "127.0.0.1",
): Promise<RunningServer> {
  const server = http2.createServer(
    connectNodeAdapter({
      routes,
      interceptors: [errorInterceptor],
      // Loopback traffic, mostly audio that does not compress: gzip would only burn CPU.
      acceptCompression: [],
      // Reference audio arrives inside the request message as base64 data URLs
      // (the gateway caps the HTTP body at 16 MiB by default).
      readMaxBytes: 32 * 1024 * 1024,
    }),
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    port: actual,
    // http2Server.close() waits for open sessions: close them gracefully (GOAWAY: streams in
    // progress go on, new ones are refused), and destroy whatever outlives the grace period.
    close: async ({ graceMs = 0 } = {}) => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sessions) s.close();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
      for (const s of sessions) s.destroy();
      await closed;
    },
  };
}
