import { type DescMessage, type DescMethod, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  type Interceptor,
  type StreamRequest,
  type StreamResponse,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { findTrailerError } from "@connectrpc/connect/protocol-grpc";
import * as grpc from "@grpc/grpc-js";
import {
  firstRequestMessage,
  refuseUnlessServerStreaming,
  streamRequest,
  unaryRequest,
} from "../platform/rpc/client-requests.js";
import type { GrpcTls } from "../platform/rpc/grpc-tls.js";
import { chainInterceptors } from "../platform/rpc/interceptor-chain.js";
import { READ_AHEAD_MESSAGES, ResponseStream } from "../platform/rpc/response-stream.js";

type RawCall = ReturnType<grpc.Channel["createCall"]>;
type HeadersInit = ConstructorParameters<typeof Headers>[0];

export interface GrpcJsTransportOptions {
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
}

/** The metadata of a call, from Connect's headers ("-bin" values travel base64 in Headers). */
function metadataOf(header: Headers): grpc.Metadata {
  const md = new grpc.Metadata();
  header.forEach((value, key) => {
    if (key.endsWith("-bin")) md.add(key, Buffer.from(value, "base64"));
    else md.add(key, value);
  });
  return md;
}

/** Fills Connect headers (response header or trailer) from metadata. */
function fillHeaders(target: Headers, md: grpc.Metadata): Headers {
  for (const [key, values] of Object.entries(md.toJSON())) {
    for (const v of values) target.append(key, typeof v === "string" ? v : v.toString("base64"));
  }
  return target;
}

/**
 * A failed status as Connect reports it: its code (gRPC and Connect share the
 * numbering), its message and its trailers as metadata (e.g. a refused key's
 * rate window). A call the caller aborted fails with the
 * abort's reason, as Connect's transports do.
 */
function errorOf(status: grpc.StatusObject, signal: AbortSignal): ConnectError {
  if (signal.aborted) return ConnectError.from(signal.reason, Code.Canceled);
  const metadata = fillHeaders(new Headers(), status.metadata);
  // Typed details (an error's reason, a content filter's error metadata) travel in
  // grpc-status-details-bin, whose google.rpc.Status also carries the message
  // unencoded: Connect's own parser reads both.
  if (metadata.has(STATUS_DETAILS_HEADER)) {
    const detailed = findTrailerError(metadata);
    if (detailed) return detailed;
  }
  const code = status.code in Code ? (status.code as number as Code) : Code.Unknown;
  return new ConnectError(messageOf(status.details), code, metadata);
}

const STATUS_DETAILS_HEADER = "grpc-status-details-bin";

/** Percent-escapes of the characters `decodeURI` leaves encoded (";/?:@&=+$,#"). */
const RESERVED_ESCAPE = /%(?:3B|2F|3F|3A|40|26|3D|2B|24|2C|23)/gi;

/**
 * Connect's server percent-encodes grpc-message with encodeURIComponent, and
 * grpc-js decodes it with decodeURI, which leaves ":" "/" "," and the other
 * reserved characters escaped ("Model acme%2Fnone"): those are decoded here.
 * (A message that itself contained such an escape literally would lose it;
 * none of ours does.)
 */
function messageOf(details: string): string {
  return details.includes("%")
    ? details.replace(RESERVED_ESCAPE, (e) => decodeURIComponent(e))
    : details;
}

function bytes(u8: Uint8Array): Buffer {
  return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
}

/**
 * What the gateway used before platform/rpc/http2-grpc-transport.ts, kept as a
 * contestant of bench/grpc-hop.ts and as a second transport for the tests that
 * show both behave alike (test/service/grpc-sessions.test.ts); no process loads it.
 *
 * A Connect `Transport` over a plain @grpc/grpc-js channel: the same typed
 * clients, interceptors, headers, trailers, deadlines, cancellation and error
 * codes as Connect's gRPC transport, at a fraction of its CPU per call and per
 * message (measured in bench/grpc-hop.ts). Calls go straight to the channel's
 * raw call (no grpc-js Readable, no interceptor layers): messages are read one
 * at a time as the caller asks for them, so a slow caller pushes back through
 * HTTP/2 flow control. grpc-js owns the connection: it reconnects, and a
 * session the peer sends GOAWAY on takes no new calls.
 */
export function createGrpcJsTransport(options: GrpcJsTransportOptions): Transport & {
  close(): void;
} {
  const url = new URL(options.baseUrl);
  const secure = url.protocol === "https:";
  const target = `${url.hostname.includes(":") ? `[${url.hostname}]` : url.hostname}:${url.port || (secure ? 443 : 80)}`;
  const credentials = secure
    ? grpc.credentials.createSsl(options.tls?.ca, options.tls?.key, options.tls?.cert)
    : grpc.credentials.createInsecure();
  const channel = new grpc.Channel(target, credentials, {
    "grpc.max_send_message_length": options.maxMessageBytes,
    "grpc.max_receive_message_length": options.maxMessageBytes,
    // grpc-js's transparent retry stays on: a call a peer refused before
    // processing it (REFUSED_STREAM on a connection it is closing with GOAWAY)
    // goes again on a fresh connection instead of failing.
  });
  const interceptors = options.interceptors ?? [];

  function deadlineOf(timeoutMs: number | undefined): grpc.Deadline {
    return timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
  }

  /** Starts a call with one request message; the listener sees decoded messages. */
  function startCall(
    method: DescMethod,
    timeoutMs: number | undefined,
    req: { header: Headers; signal: AbortSignal; message: unknown },
    listener: {
      onHeader(header: Headers): void;
      onMessage(message: unknown): void;
      onStatus(status: grpc.StatusObject): void;
    },
  ): RawCall {
    const path = `/${method.parent.typeName}/${method.name}`;
    const call = channel.createCall(path, deadlineOf(timeoutMs), undefined, null, null);
    const onAbort = () => call.cancelWithStatus(grpc.status.CANCELLED, "Cancelled by the caller");
    req.signal.addEventListener("abort", onAbort, { once: true });
    let ended = false;
    call.start(metadataOf(req.header), {
      onReceiveMetadata: (md) => listener.onHeader(fillHeaders(new Headers(), md)),
      onReceiveMessage: (data: Buffer) => {
        if (ended) return;
        let message: unknown;
        try {
          message = fromBinary(method.output, data);
        } catch (err) {
          call.cancelWithStatus(grpc.status.INTERNAL, `Cannot decode the response: ${err}`);
          return;
        }
        listener.onMessage(message);
      },
      onReceiveStatus: (status) => {
        if (ended) return;
        ended = true;
        req.signal.removeEventListener("abort", onAbort);
        listener.onStatus(status);
      },
    });
    if (req.signal.aborted) {
      onAbort();
      return call;
    }
    call.sendMessageWithContext({}, bytes(toBinary(method.input, req.message as never)));
    call.halfClose();
    return call;
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
        const call = startCall(method, timeout, req, {
          onHeader: (h) => {
            responseHeader = h;
          },
          onMessage: (m) => {
            message = m;
          },
          onStatus: (status) => {
            if (status.code !== grpc.status.OK) return reject(errorOf(status, req.signal));
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
              trailer: fillHeaders(new Headers(), status.metadata),
              message: message as never,
            });
          },
        });
        call.startRead();
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
      let reading = false;
      const responses = new ResponseStream({
        taken: () => read(),
        waiting: () => read(),
        cancel: () => call.cancelWithStatus(grpc.status.CANCELLED, "Cancelled by the caller"),
      });
      const call = startCall(
        method,
        timeoutMs,
        { header: req.header, signal: req.signal, message: first },
        {
          onHeader: (h) => responses.headerArrived(h),
          onMessage: (m) => {
            reading = false;
            responses.push(m);
            read();
          },
          onStatus: (s) => {
            fillHeaders(trailer, s.metadata);
            responses.end(s.code !== grpc.status.OK ? errorOf(s, req.signal) : undefined);
          },
        },
      );
      // Messages are read ahead up to READ_AHEAD_MESSAGES: pausing the HTTP/2 stream after
      // every message and resuming it at the next read cost more CPU than the whole call
      // (measured at one call at a time). Past that, the caller's pace pushes back.
      const read = () => {
        if (reading || responses.ended || responses.queued >= READ_AHEAD_MESSAGES) return;
        reading = true;
        call.startRead();
      };
      read();
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

  return { unary, stream, close: () => channel.close() } as Transport & { close(): void };
}
