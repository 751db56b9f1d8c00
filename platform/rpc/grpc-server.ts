import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { peerContextValues, socketContextValues } from "../auth/peer-identity.js";
import { listenOn } from "../listen.js";
import { grpcMetricsInterceptor } from "../observability/grpc-metrics.js";
import { tracingInterceptor } from "../observability/grpc-tracing.js";
import { LogDedupe } from "../observability/log-dedupe.js";
import { componentLogger } from "../observability/logger.js";
import { errorDetail } from "./errors.js";
import { createDirectHandler } from "./grpc-direct.js";
import type { GrpcTls } from "./grpc-tls.js";
import { createInProcessTransport, type ServiceRegistration } from "./in-process-transport.js";
import { reflectionServices } from "./reflection.js";
import { REQUEST_ID_HEADER } from "./request-id.js";

const log = componentLogger("grpc");
/** A bug every request hits is one line per window with a count, not one per request. */
const faults = new LogDedupe();

/**
 * The longest error message a service sends. It travels percent-encoded in the
 * grpc-message trailer: a message echoing a 70,000-character value broke the
 * HTTP/2 frame limits and took other callers' requests down with it.
 */
export const MAX_ERROR_MESSAGE_CHARS = 1000;

/**
 * The largest message a service reads, and so the largest an internal client
 * may write: a client that knows it refuses an oversized message itself (413
 * at the gateway) instead of streaming it into the shared HTTP/2 session.
 * Reference audio arrives inside the speech request as base64 data URLs (the
 * gateway caps the HTTP body at 21 MiB by default).
 */
export const GRPC_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/**
 * Anything that is not a deliberate ConnectError is a bug: log it with its
 * stack here, and hand the caller a generic Internal error so no stack trace
 * or internal detail ever leaves the process. A deliberate one keeps its code,
 * metadata and details, with its message cut to MAX_ERROR_MESSAGE_CHARS; the
 * internal detail it carries as its `cause` (an address, a provider's words, a
 * store client's error: never in the message) is logged here, with the
 * request id, and goes no further.
 * Except when the call was cancelled (its caller went away, or a shutdown cut it): whatever
 * the handler throws then (an AbortError, mostly) is the cancellation arriving, an expected
 * outcome that any client can cause at will, so it is Canceled and logged at debug only.
 */
function hideUnexpected(
  err: unknown,
  procedure: string,
  requestId: string | null,
  signal: AbortSignal,
): ConnectError {
  if (!(err instanceof ConnectError)) {
    if (signal.aborted) {
      log.debug({ procedure, requestId: requestId ?? undefined }, "call cancelled");
      return new ConnectError("The call was cancelled", Code.Canceled);
    }
    const message = err instanceof Error ? err.message : String(err);
    faults.write(
      log,
      "error",
      `${procedure}\u0000${message}`,
      { err, procedure, requestId: requestId ?? undefined },
      "unexpected error",
    );
    return new ConnectError("Internal server error", Code.Internal);
  }
  // A cancelled call's cause is only the caller's abort: nothing went wrong here.
  if (err.cause !== undefined && err.code !== Code.Canceled) {
    // A store or provider outage fails every call alike: one line and a count per window.
    faults.write(
      log,
      "warn",
      `${procedure}\u0000${err.code}\u0000${err.rawMessage}`,
      {
        procedure,
        requestId: requestId ?? undefined,
        code: Code[err.code],
        message: err.rawMessage,
        detail: errorDetail(err.cause),
      },
      "call failed",
    );
  }
  if (err.rawMessage.length <= MAX_ERROR_MESSAGE_CHARS) return err;
  const cut = new ConnectError(
    `${err.rawMessage.slice(0, MAX_ERROR_MESSAGE_CHARS - 1)}…`,
    err.code,
    err.metadata,
    undefined,
    err.cause,
  );
  cut.details = err.details;
  return cut;
}

export const errorInterceptor: Interceptor = (next) => async (req) => {
  const procedure = req.url;
  // The gateway's request id (gateway/request-id.ts), so a service log line joins its access log.
  const requestId = req.header.get(REQUEST_ID_HEADER);
  try {
    const res = await next(req);
    if (!res.stream) return res;
    const upstream = res.message;
    async function* guarded() {
      try {
        yield* upstream;
      } catch (err) {
        throw hideUnexpected(err, procedure, requestId, req.signal);
      }
    }
    return { ...res, message: guarded() };
  } catch (err) {
    throw hideUnexpected(err, procedure, requestId, req.signal);
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

export interface ServedServices extends RunningServer {
  /**
   * A transport that calls these services in this process, through the same
   * interceptors as the listener: for a caller that runs in the same process.
   */
  inProcess(options?: { clientInterceptors?: Interceptor[]; freezeMessages?: boolean }): Transport;
}

export interface GrpcServerOptions {
  /** Run inside the error interceptor, so what they throw is hidden the same way. */
  interceptors?: Interceptor[];
  /**
   * Serve TLS; a client certificate signed by `tls.ca` is requested (not
   * required: callers with only a bearer key still connect) and, when it
   * verifies, proves a Railgate gateway (mTLS).
   */
  tls?: GrpcTls;
  /** The setting that chose the port, named when it is taken (e.g. RAILGATE_GUARDRAIL_GRPC_PORT). */
  portVariable?: string;
}

/**
 * Serves Connect routes over gRPC (HTTP/2, cleartext or TLS) so plain grpc-js
 * clients can call them.
 */
export async function startGrpcServer(
  services: ServiceRegistration[],
  port: number,
  host = "127.0.0.1",
  options: GrpcServerOptions = {},
): Promise<ServedServices> {
  // Outermost, so the calls are counted (and their spans fail) with the code the caller sees.
  const interceptors = [
    grpcMetricsInterceptor,
    tracingInterceptor,
    errorInterceptor,
    ...(options.interceptors ?? []),
  ];
  const handler = connectNodeAdapter({
    routes: (router) => {
      for (const { service, impl } of services) router.service(service, impl);
    },
    interceptors,
    contextValues: peerContextValues,
    // Loopback traffic, mostly audio that does not compress: gzip would only burn CPU.
    acceptCompression: [],
    readMaxBytes: GRPC_MAX_MESSAGE_BYTES,
  });
  // Server reflection is public, like health: it describes the open-source .proto files and
  // no data, so it sits outside the caller interceptors (whose default is "management key").
  const reflection = connectNodeAdapter({
    routes: (router) => {
      for (const { service, impl } of reflectionServices(services.map((s) => s.service)))
        router.service(service, impl);
    },
    interceptors: [errorInterceptor],
    acceptCompression: [],
  });
  const route: typeof handler = (req, res) =>
    (req.url?.startsWith("/grpc.reflection.") ? reflection : handler)(req, res);
  // gRPC unary and server-streaming calls (every hot one: Synthesize, the guardrail checks)
  // are served straight from their HTTP/2 streams, through the same interceptors; Connect's
  // adapter keeps the rest (reflection's bidi stream, the Connect and gRPC-web protocols).
  const direct = createDirectHandler({
    services,
    interceptors,
    readMaxBytes: GRPC_MAX_MESSAGE_BYTES,
    contextValues: (stream) => socketContextValues(stream.session?.socket),
  });
  const tls = options.tls;
  // No request listener: node:http2 then builds no compat request and response per stream
  // (it does only once one is added); the streams Connect serves get theirs built here.
  const server = tls
    ? http2.createSecureServer({
        ...tls,
        requestCert: true,
        rejectUnauthorized: false,
        minVersion: "TLSv1.2",
      })
    : http2.createServer();
  const onStream = (
    stream: http2.ServerHttp2Stream,
    headers: http2.IncomingHttpHeaders,
    _flags: number,
    rawHeaders: string[],
  ) => {
    if (direct(stream, headers)) return;
    route(
      new http2.Http2ServerRequest(stream, headers, {}, rawHeaders),
      new http2.Http2ServerResponse(stream),
    );
  };
  server.on("stream", onStream);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  await listenOn(server, port, host, options.portVariable ?? "port");
  const actual = (server.address() as AddressInfo).port;
  return {
    port: actual,
    inProcess: (inProcess = {}) =>
      createInProcessTransport({ services, serverInterceptors: interceptors, ...inProcess }),
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
