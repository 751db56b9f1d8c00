import type { OutgoingHttpHeaders, SecureClientSessionOptions } from "node:http2";
import { isIP, connect as netConnect } from "node:net";
import { type ConnectionOptions, connect as tlsConnect } from "node:tls";
import { type DescMessage, type DescMethod, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextKey,
  type Interceptor,
  type StreamRequest,
  type StreamResponse,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { CONFIG_DEFAULTS } from "../config/config.js";
import {
  firstRequestMessage,
  refuseUnlessServerStreaming,
  streamRequest,
  unaryRequest,
} from "./client-requests.js";
import type { GrpcTls } from "./grpc-tls.js";
import { Http2GrpcCall } from "./http2-grpc-call.js";
import { type Http2PoolOptions, Http2Target } from "./http2-grpc-pool.js";
import { dialer } from "./http2-grpc-session.js";
import { chainInterceptors } from "./interceptor-chain.js";
import { READ_AHEAD_MESSAGES, ResponseStream } from "./response-stream.js";

type HeadersInit = ConstructorParameters<typeof Headers>[0];

export interface Http2GrpcTransportOptions {
  /** http://host:port (cleartext) or https://host:port (TLS; mTLS with `tls`). */
  baseUrl: string;
  /** The gateway's client certificate and the CA of the services' certificates. */
  tls?: { cert: Buffer; key: Buffer; ca: Buffer } | GrpcTls;
  /** Connect interceptors, run exactly as with Connect's own transports. */
  interceptors?: Interceptor[];
  /** Largest message written or read; a larger one fails here with ResourceExhausted. */
  maxMessageBytes: number;
  /** Deadline of a unary call whose caller set none (streams have none unless asked). */
  defaultUnaryTimeoutMs?: number;
  /** Keepalive pings, connect timeout and connections per address (defaults: platform/config/config.ts). */
  pool?: Partial<Http2PoolOptions>;
}

/**
 * A call's context value: run it on the n-th ready connection of the target (taken modulo how
 * many there are), so a health check can ask every connection, not the next one in turn.
 */
export const ON_CONNECTION = createContextKey<number>(-1, {
  description: "ready connection index",
});

/** What this transport adds to Connect's: how many connections are ready, and closing them all. */
export interface Http2GrpcTransport extends Transport {
  /** Ready connections (at least 1): the distinct paths ON_CONNECTION can choose from. */
  paths(): number;
  close(): void;
}

/** The call's metadata as HTTP/2 headers ("-bin" values travel base64, as Connect keeps them). */
function headersOut(path: string, header: Headers): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ":path": path };
  header.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

/** One request message behind its 5-byte gRPC prefix, in one buffer. */
function frameOf(method: DescMethod, message: unknown, maxMessageBytes: number): Buffer {
  const bytes = toBinary(method.input, message as never);
  const n = bytes.byteLength;
  if (n > maxMessageBytes) {
    throw new ConnectError(
      `Sent message larger than max (${n} vs. ${maxMessageBytes})`,
      Code.ResourceExhausted,
    );
  }
  const frame = Buffer.allocUnsafe(5 + n);
  frame[0] = 0;
  frame.writeUInt32BE(n, 1);
  frame.set(bytes, 5);
  return frame;
}

function decoded(
  method: DescMethod,
  bytes: Uint8Array,
): { message?: unknown; error?: ConnectError } {
  try {
    return { message: fromBinary(method.output, bytes) };
  } catch (err) {
    return {
      error: new ConnectError(`Cannot decode the response: ${err}`, Code.Internal),
    };
  }
}

/**
 * A Connect `Transport` speaking gRPC straight over node:http2 (the client
 * side of platform/rpc/grpc-direct.ts): the same typed clients, interceptors,
 * headers, trailers, deadlines, cancellation and error codes as Connect's gRPC
 * transport and the grpc-js one it replaces (bench/grpc-js-transport.ts), without
 * grpc-js's channel, filter and call layers per call (measured in
 * bench/grpc-hop.ts). Calls share a few HTTP/2 connections per address of the target, pinged
 * while in use (http2-grpc-pool.ts, http2-grpc-session.ts); each is a request buffer written at once and
 * response frames cut from the stream's DATA (http2-grpc-call.ts). Stream
 * messages are read ahead a few at a time; past that the caller's pace pushes
 * back through HTTP/2 flow control. Client and bidi streams are not served
 * (the services have none): they fail with Unimplemented.
 */
export function createHttp2GrpcTransport(options: Http2GrpcTransportOptions): Http2GrpcTransport {
  const url = new URL(options.baseUrl);
  const secure = url.protocol === "https:";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = Number(url.port || (secure ? 443 : 80));
  const sessionOptions: SecureClientSessionOptions = {
    // As grpc-js: no limit of Node's own on header blocks sent or on session memory
    // (Node degrades badly at that limit; the message limits bound what a call holds).
    maxSendHeaderBlockLength: Number.MAX_SAFE_INTEGER,
    maxSessionMemory: Number.MAX_SAFE_INTEGER,
  };
  const tlsOptions: ConnectionOptions = {
    port,
    ALPNProtocols: ["h2"],
    ca: options.tls?.ca,
    cert: options.tls?.cert,
    key: options.tls?.key,
  };
  // SNI names a host, never an address (node:http2 would send the address and warn, DEP0123);
  // the certificate is checked against the name when there is one, else the address.
  if (isIP(host) === 0) tlsOptions.servername = host;
  // Each connection goes to one resolved address of the host (http2-grpc-pool.ts).
  const socketTo = secure
    ? (address: string) => tlsConnect({ ...tlsOptions, host: address })
    : (address: string) => netConnect({ host: address, port });
  const target = new Http2Target(host, dialer(url.origin, sessionOptions, socketTo), {
    ...CONFIG_DEFAULTS.grpcClient,
    ...options.pool,
  });
  const interceptors = options.interceptors ?? [];
  const { maxMessageBytes } = options;

  function pathOf(method: DescMethod): string {
    return `/${method.parent.typeName}/${method.name}`;
  }

  async function unary<I extends DescMessage, O extends DescMessage>(
    method: Parameters<Transport["unary"]>[0],
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    header: HeadersInit,
    input: unknown,
    contextValues?: ContextValues,
  ): Promise<UnaryResponse<I, O>> {
    const timeout = timeoutMs ?? options.defaultUnaryTimeoutMs;
    const final = (req: UnaryRequest<I, O>) =>
      new Promise<UnaryResponse<I, O>>((resolve, reject) => {
        let responseHeader = new Headers();
        let message: unknown;
        const body = frameOf(method, req.message, maxMessageBytes);
        const call: Http2GrpcCall = new Http2GrpcCall(
          target,
          {
            headers: headersOut(pathOf(method), req.header),
            body,
            timeoutMs: timeout,
            signal: req.signal,
            maxMessageBytes,
            pin: req.contextValues.get(ON_CONNECTION),
          },
          {
            onHeader: (h) => {
              responseHeader = h;
            },
            onMessage: (bytes) => {
              const d = decoded(method, bytes);
              if (d.error) call.cancel(d.error);
              else message = d.message;
            },
            onEnd: (error, trailer) => {
              if (error) return reject(error);
              if (message === undefined) {
                return reject(
                  new ConnectError("protocol error: missing output message", Code.Internal),
                );
              }
              resolve({
                stream: false,
                service: method.parent,
                method: method as never,
                header: responseHeader,
                trailer,
                message: message as never,
              });
            },
          },
        );
        call.start();
      });
    return chainInterceptors(
      final,
      interceptors,
    )(unaryRequest(options.baseUrl, method, signal, header, input, contextValues));
  }

  async function stream<I extends DescMessage, O extends DescMessage>(
    method: Parameters<Transport["stream"]>[0],
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    header: HeadersInit,
    input: AsyncIterable<unknown>,
    contextValues?: ContextValues,
  ): Promise<StreamResponse<I, O>> {
    refuseUnlessServerStreaming(method);
    const final = async (req: StreamRequest<I, O>): Promise<StreamResponse<I, O>> => {
      const first = await firstRequestMessage(req.message);
      const trailer = new Headers();
      const responses = new ResponseStream({
        // Read ahead up to READ_AHEAD_MESSAGES (onMessage pauses there): past that, the
        // caller's pace pushes back.
        taken: (queued) => {
          if (queued < READ_AHEAD_MESSAGES) call.resume();
        },
        waiting: () => {},
        cancel: () => call.cancel(new ConnectError("Cancelled by the caller", Code.Canceled)),
      });
      const call: Http2GrpcCall = new Http2GrpcCall(
        target,
        {
          headers: headersOut(pathOf(method), req.header),
          body: frameOf(method, first, maxMessageBytes),
          timeoutMs,
          signal: req.signal,
          maxMessageBytes,
        },
        {
          onHeader: (h) => responses.headerArrived(h),
          onMessage: (bytes) => {
            const d = decoded(method, bytes);
            if (d.error) {
              call.cancel(d.error);
              return;
            }
            responses.push(d.message);
            if (responses.queued >= READ_AHEAD_MESSAGES) call.pause();
          },
          onEnd: (error, t) => {
            t.forEach((v, k) => {
              trailer.append(k, v);
            });
            responses.end(error);
          },
        },
      );
      call.start();
      const responseHeader = await responses.header;
      return {
        stream: true,
        service: method.parent,
        method: method as never,
        header: responseHeader,
        trailer,
        message: responses.messages(),
      };
    };
    return chainInterceptors(
      final,
      interceptors,
    )(streamRequest(options.baseUrl, method, signal, header, input, contextValues));
  }

  return {
    unary,
    stream,
    paths: () => target.paths(),
    close: () => target.close(),
  } as Http2GrpcTransport;
}
