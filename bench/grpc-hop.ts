/**
 * The internal gRPC hop alone, client and server in separate processes:
 * CPU per call of a speech-like server-streaming call (one request, a start
 * message and 10 audio messages of 9,600 bytes) and of a small unary call,
 * `GRPC_HOP_CONCURRENCY` (50) at a time, `GRPC_HOP_CALLS` (3,000) measured after
 * as many unmeasured. Each process reports its own `process.cpuUsage()`.
 *
 *   node dist/bench/grpc-hop.js [client ...] [-- server ...]
 *
 * Clients: `connect` (Connect's gRPC transport, what the gateway used first),
 * `grpc-js` (bench/grpc-js-transport.ts, what it used next) and `http2`
 * (platform/rpc/http2-grpc-transport.ts, what it uses now).
 * Servers: `services` (platform/rpc/grpc-server.ts, what the services use: unary
 * and server-streaming calls served from the HTTP/2 stream, platform/rpc/grpc-direct.ts),
 * `connect` (Connect's node adapter on node:http2 alone, what the services
 * used before) and `grpc-js` (bench/grpc-js-server.ts: a grpc-js server
 * calling the same ServiceImpl through Connect's handler machinery). Every
 * pair is measured; without `-- server ...`, `services` alone.
 */
import { fork } from "node:child_process";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { serviceCredential } from "../gateway/clients.js";
import { AudioFormat } from "../gen/railgate/speech/v1/speech_pb.js";
import {
  ListModelsResponseSchema,
  SpeechService,
  SynthesizeResponseSchema,
} from "../gen/railgate/speech/v1/speech_service_pb.js";
import { peerContextValues } from "../platform/auth/peer-identity.js";
import { grpcMetricsInterceptor } from "../platform/observability/grpc-metrics.js";
import { tracingInterceptor } from "../platform/observability/grpc-tracing.js";
import {
  errorInterceptor,
  GRPC_MAX_MESSAGE_BYTES,
  startGrpcServer,
} from "../platform/rpc/grpc-server.js";
import { createHttp2GrpcTransport } from "../platform/rpc/http2-grpc-transport.js";
import { served } from "../platform/rpc/in-process-transport.js";
import { addConnectServices } from "./grpc-js-server.js";
import { createGrpcJsTransport } from "./grpc-js-transport.js";

const CALLS = Number(process.env.GRPC_HOP_CALLS ?? 3000);
const CONCURRENCY = Number(process.env.GRPC_HOP_CONCURRENCY ?? 50);
const CHUNKS = 10;
const CHUNK_BYTES = 9600;
const TOKEN = "bench-internal-token";

type Msg =
  | { type: "port"; port: number }
  | { type: "cpu"; ms: number }
  | { type: "result"; cpuMs: number; wallMs: number; errors: number };

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** A SpeechService that answers as the real one does on the wire, with no work behind it. */
async function serve(kind: string): Promise<void> {
  const audio = new Uint8Array(CHUNK_BYTES).fill(7);
  const impl = {
    async *synthesize() {
      yield create(SynthesizeResponseSchema, {
        event: {
          case: "start",
          value: {
            format: AudioFormat.PCM,
            contentType: "audio/pcm",
            sampleRate: 24000,
            channels: 1,
            generationId: "gen_0123456789abcdef",
            model: "openai/gpt-4o-mini-tts",
            provider: "openai",
          },
        },
      });
      for (let i = 0; i < CHUNKS; i++) {
        // One event-loop turn apart, as an upstream's chunks arrive.
        await new Promise((r) => setImmediate(r));
        yield create(SynthesizeResponseSchema, { event: { case: "audio", value: audio } });
      }
    },
    async listModels() {
      return create(ListModelsResponseSchema, {
        models: [{ id: "openai/gpt-4o-mini-tts", name: "GPT-4o mini TTS" }],
      });
    },
  };
  // An interceptor that reads the caller's metadata, as authentication does.
  const interceptors: Interceptor[] = [
    (next) => (req) => {
      if (req.header.get("railgate-internal-token") !== TOKEN) throw new Error("no token");
      return next(req);
    },
  ];
  let server: { port: number; close(): Promise<void> };
  if (kind === "services") {
    server = await startGrpcServer([served(SpeechService, impl)], 0, "127.0.0.1", {
      interceptors,
    });
  } else if (kind === "connect") {
    const h2 = http2.createServer(
      connectNodeAdapter({
        routes: (router) => router.service(SpeechService, impl),
        // The interceptors platform/rpc/grpc-server.ts gives Connect's adapter.
        interceptors: [
          grpcMetricsInterceptor,
          tracingInterceptor,
          errorInterceptor,
          ...interceptors,
        ],
        contextValues: peerContextValues,
        acceptCompression: [],
        readMaxBytes: GRPC_MAX_MESSAGE_BYTES,
      }),
    );
    await new Promise<void>((resolve) => h2.listen(0, "127.0.0.1", resolve));
    server = {
      port: (h2.address() as AddressInfo).port,
      close: async () => {
        h2.close();
      },
    };
  } else if (kind === "grpc-js") {
    const g = new grpc.Server({
      "grpc.max_receive_message_length": GRPC_MAX_MESSAGE_BYTES,
      "grpc.max_send_message_length": GRPC_MAX_MESSAGE_BYTES,
    });
    addConnectServices(g, [served(SpeechService, impl)], [errorInterceptor, ...interceptors]);
    const port = await new Promise<number>((resolve, reject) =>
      g.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    server = { port, close: async () => g.forceShutdown() };
  } else throw new Error(`unknown server ${kind}`);
  process.send?.({ type: "port", port: server.port } satisfies Msg);
  process.on("message", (m: { type: string }) => {
    if (m.type === "cpu") process.send?.({ type: "cpu", ms: cpuMs() } satisfies Msg);
    if (m.type === "exit") void server.close().then(() => process.exit(0));
  });
}

function transportOf(kind: string, port: number): Transport {
  const baseUrl = `http://127.0.0.1:${port}`;
  const interceptors = [serviceCredential(TOKEN)];
  if (kind === "connect") {
    return createGrpcTransport({
      baseUrl,
      acceptCompression: [],
      interceptors,
      readMaxBytes: GRPC_MAX_MESSAGE_BYTES,
      writeMaxBytes: GRPC_MAX_MESSAGE_BYTES,
    });
  }
  if (kind === "grpc-js") {
    return createGrpcJsTransport({
      baseUrl,
      interceptors,
      maxMessageBytes: GRPC_MAX_MESSAGE_BYTES,
    });
  }
  if (kind === "http2") {
    return createHttp2GrpcTransport({
      baseUrl,
      interceptors,
      maxMessageBytes: GRPC_MAX_MESSAGE_BYTES,
    });
  }
  throw new Error(`unknown client ${kind}`);
}

async function drive(kind: string, port: number, call: "stream" | "unary"): Promise<void> {
  const client = createClient(SpeechService, transportOf(kind, port));
  const headers = { authorization: "Bearer sk-bench", "railgate-ingress-region": "global" };
  let errors = 0;
  const one = async () => {
    const signal = new AbortController().signal;
    try {
      if (call === "unary") {
        await client.listModels({}, { headers, signal });
        return;
      }
      let bytes = 0;
      for await (const m of client.synthesize(
        {
          model: "openai/gpt-4o-mini-tts",
          input: { case: "text", value: "Hello there, this is a benchmark." },
          voice: "alloy",
        },
        { headers, signal },
      )) {
        if (m.event.case === "audio") bytes += m.event.value.byteLength;
      }
      if (bytes !== CHUNKS * CHUNK_BYTES) errors++;
    } catch (err) {
      if (errors++ === 0) console.error(err);
    }
  };
  const run = async (n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < n) await one();
      }),
    );
  };
  await run(CALLS);
  // Measured only once warm.
  await new Promise<void>((resolve) => {
    process.send?.({ type: "cpu", ms: 0 } satisfies Msg);
    process.once("message", () => resolve());
  });
  const cpu0 = cpuMs();
  const t0 = performance.now();
  await run(CALLS);
  process.send?.({
    type: "result",
    cpuMs: cpuMs() - cpu0,
    wallMs: performance.now() - t0,
    errors,
  } satisfies Msg);
  process.exit(0);
}

function child(args: string[]) {
  const p = fork(fileURLToPath(import.meta.url), args, { stdio: "inherit" });
  const next = <T extends Msg["type"]>(type: T) =>
    new Promise<Extract<Msg, { type: T }>>((resolve) => {
      const on = (m: Msg) => {
        if (m.type !== type) return;
        p.off("message", on);
        resolve(m as Extract<Msg, { type: T }>);
      };
      p.on("message", on);
    });
  return { p, next };
}

async function measure(clientKind: string, serverKind: string, call: "stream" | "unary") {
  const server = child(["serve", serverKind]);
  const { port } = await server.next("port");
  const client = child(["drive", clientKind, String(port), call]);
  await client.next("cpu");
  server.p.send({ type: "cpu" });
  const s0 = await server.next("cpu");
  client.p.send({ type: "go" });
  const result = await client.next("result");
  server.p.send({ type: "cpu" });
  const s1 = await server.next("cpu");
  server.p.send({ type: "exit" });
  const row = {
    call,
    client: clientKind,
    server: serverKind,
    "client ms/call": +(result.cpuMs / CALLS).toFixed(3),
    "server ms/call": +((s1.ms - s0.ms) / CALLS).toFixed(3),
    "calls/s": Math.round((CALLS / result.wallMs) * 1000),
    errors: result.errors,
  };
  return row;
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === "serve") await serve(rest[0] ?? "services");
else if (mode === "drive")
  await drive(rest[0] ?? "connect", Number(rest[1]), rest[2] as "stream" | "unary");
else {
  const argv = process.argv.slice(2);
  const split = argv.indexOf("--");
  const clients = (split < 0 ? argv : argv.slice(0, split)).filter(Boolean);
  const servers = split < 0 ? [] : argv.slice(split + 1);
  const rows = [];
  for (const call of ["stream", "unary"] as const) {
    for (const s of servers.length ? servers : ["services"]) {
      for (const c of clients.length ? clients : ["connect", "grpc-js", "http2"]) {
        rows.push(await measure(c, s, call));
      }
    }
  }
  console.table(rows);
}
