import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { addConnectServices, CallTracker } from "./grpc-js-server.js";
import type { GrpcTls } from "./grpc-tls.js";
import { createInProcessTransport, type ServiceRegistration } from "./in-process-transport.js";
import { componentLogger } from "./logger.js";

const log = componentLogger("grpc");

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
 * gateway caps the HTTP body at 16 MiB by default).
 */
export const GRPC_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/**
 * Anything that is not a deliberate ConnectError is a bug: log it with its
 * stack here, and hand the caller a generic Internal error so no stack trace
 * or internal detail ever leaves the process. A deliberate one keeps its code,
 * metadata and details, with its message cut to MAX_ERROR_MESSAGE_CHARS.
 */
function hideUnexpected(err: unknown, procedure: string): ConnectError {
  if (!(err instanceof ConnectError)) {
    log.error({ err, procedure }, "unexpected error");
    return new ConnectError("Internal server error", Code.Internal);
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
}

/**
 * The certificates of a TLS listener, as grpc-js takes them. They are handed
 * over a microtask later: grpc-js subscribes to a provider before it registers
 * the listener that applies them, so certificates given synchronously would be
 * lost and every TLS connection dropped.
 */
function staticCertificates(tls: GrpcTls): grpc.experimental.CertificateProvider {
  return {
    addCaCertificateListener: (listener) =>
      queueMicrotask(() => listener({ caCertificate: tls.ca })),
    removeCaCertificateListener: () => {},
    addIdentityCertificateListener: (listener) =>
      queueMicrotask(() => listener({ certificate: tls.cert, privateKey: tls.key })),
    removeIdentityCertificateListener: () => {},
  };
}

/**
 * Serves Connect `ServiceImpl`s over gRPC (HTTP/2, cleartext or TLS) from a
 * @grpc/grpc-js server (see grpc-js-server.ts: the same interceptors, headers,
 * trailers, deadlines and cancellation as Connect's own server, at about two
 * thirds of its CPU per stream and a third per unary call, bench/grpc-hop.ts).
 */
export async function startGrpcServer(
  services: ServiceRegistration[],
  port: number,
  host = "127.0.0.1",
  options: GrpcServerOptions = {},
): Promise<ServedServices> {
  const interceptors = [errorInterceptor, ...(options.interceptors ?? [])];
  const server = new grpc.Server({
    "grpc.max_receive_message_length": GRPC_MAX_MESSAGE_BYTES,
    "grpc.max_send_message_length": GRPC_MAX_MESSAGE_BYTES,
  });
  const calls = new CallTracker();
  addConnectServices(server, services, interceptors, calls);
  const tls = options.tls;
  // A client certificate is requested but not required: callers with only a
  // bearer key still connect; one that verifies against tls.ca proves a gateway.
  // (grpc-js takes the identity provider first here, whatever its parameter names say.)
  const credentials = tls
    ? grpc.experimental.createCertificateProviderServerCredentials(
        staticCertificates(tls),
        staticCertificates(tls),
        false,
      )
    : grpc.ServerCredentials.createInsecure();
  const address = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  const actual = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, credentials, (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  let closing: Promise<void> | undefined;
  return {
    port: actual,
    inProcess: (inProcess = {}) =>
      createInProcessTransport({ services, serverInterceptors: interceptors, ...inProcess }),
    // tryShutdown stops accepting at once and sends GOAWAY (calls in progress go on, new
    // ones are refused); whatever outlives the grace period is cancelled. The calls are
    // counted here: grpc-js's own callback can wait forever on a session a client already
    // tore down.
    close: ({ graceMs = 0 } = {}) => {
      closing ??= (async () => {
        server.tryShutdown(() => {});
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([calls.idle(), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
        clearTimeout(timer);
        server.forceShutdown();
        // The cancellations reach the handlers' signals before the caller goes on.
        await new Promise((r) => setImmediate(r));
      })();
      return closing;
    },
  };
}
