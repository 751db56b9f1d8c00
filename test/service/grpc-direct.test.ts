import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createClient,
  createContextValues,
  type Interceptor,
} from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import { createGrpcJsTransport } from "../../bench/grpc-js-transport.js";
import { AudioFormat } from "../../gen/railgate/speech/v1/speech_pb.js";
import {
  SpeechService,
  SynthesizeRequestSchema,
  SynthesizeResponseSchema,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { createDirectHandler } from "../../platform/rpc/grpc-direct.js";
import { directBytesEncoder } from "../../platform/rpc/grpc-direct-encoding.js";
import {
  GRPC_MAX_MESSAGE_BYTES,
  type ServedServices,
  startGrpcServer,
} from "../../platform/rpc/grpc-server.js";
import { createHttp2GrpcTransport } from "../../platform/rpc/http2-grpc-transport.js";
import { served } from "../../platform/rpc/in-process-transport.js";
import {
  metadata,
  type PlainClient,
  plainClient,
  serverStream,
  statusOf,
} from "../kit/grpc-plain.js";
import { pollUntil } from "../kit/poll.js";

const KEY = "sk-direct-test";
/** Three audio pieces, each of its own bytes, one large enough for a multi-byte length. */
const PIECES = [
  new Uint8Array(3).fill(1),
  new Uint8Array(200_000).map((_, i) => i % 251),
  new Uint8Array(0),
];

/** Turns of the event loop each "clip" call's handler saw while producing its messages. */
const clipTurns: number[] = [];
/** Messages the "endless" handler has produced. */
let endlessMessages = 0;

/** What each call's handler saw when it ended: its signal's reason, and that its finally ran. */
const ended: { voice: string; reason: unknown }[] = [];

const speech = {
  async *synthesize(
    req: { voice?: string },
    ctx: { signal: AbortSignal; responseHeader: Headers; responseTrailer: Headers },
  ) {
    try {
      if (req.voice === "unknown") {
        throw new ConnectError("voice unknown is not offered", Code.NotFound, {
          "x-refusal": "voice",
        });
      }
      ctx.responseHeader.set("x-answered-by", "direct-test");
      yield create(SynthesizeResponseSchema, {
        event: {
          case: "start",
          value: { format: AudioFormat.PCM, contentType: "audio/pcm", sampleRate: 24000 },
        },
      });
      if (req.voice === "clip") {
        // A 96 kB clip in ten messages, produced as fast as the server asks: how many turns of
        // the event loop pass while it does tells whether it waited for "drain".
        let turns = 0;
        let ticking = true;
        const tick = () => {
          if (!ticking) return;
          turns++;
          setImmediate(tick);
        };
        setImmediate(tick);
        for (let i = 0; i < 10; i++) {
          yield { event: { case: "audio" as const, value: new Uint8Array(9_600).fill(i) } };
        }
        ticking = false;
        clipTurns.push(turns);
        return;
      }
      if (req.voice === "endless") {
        // 64 KiB messages until the caller goes away.
        while (!ctx.signal.aborted) {
          endlessMessages++;
          yield { event: { case: "audio" as const, value: new Uint8Array(64 * 1024) } };
        }
        return;
      }
      if (req.voice === "hang") {
        // Audio that never comes: only the caller going away or the deadline ends the call.
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        return;
      }
      for (const audio of PIECES) yield { event: { case: "audio" as const, value: audio } };
      ctx.responseTrailer.set("x-pieces", String(PIECES.length));
    } finally {
      ended.push({
        voice: req.voice ?? "",
        reason: ctx.signal.aborted ? ctx.signal.reason : undefined,
      });
    }
  },
};

/** Authentication as the services do it: from the call's metadata, in an interceptor. */
const needsKey: Interceptor = (next) => (req) => {
  if (req.header.get("authorization") !== `Bearer ${KEY}`) {
    throw new ConnectError("a key is required", Code.Unauthenticated);
  }
  return next(req);
};

const REQUEST = { model: "openai/gpt-4o-mini-tts", text: "Hello.", voice: "alloy" };

function audioOf(messages: Record<string, unknown>[]): Buffer[] {
  return messages.filter((m) => m.audio !== undefined).map((m) => m.audio as Buffer);
}

/**
 * The services serve unary and server-streaming gRPC calls straight from
 * their HTTP/2 streams (platform/rpc/grpc-direct.ts): plain grpc-js clients,
 * Connect's gRPC transport and the gateway's grpc-js transport all read the
 * same stream, with the interceptors, headers, trailers, errors, cancellation
 * and deadlines Connect's server gave them; other protocols still reach
 * Connect's adapter.
 */
describe("gRPC calls served from the HTTP/2 stream", () => {
  let server: ServedServices;
  let plain: PlainClient;

  before(async () => {
    server = await startGrpcServer([served(SpeechService, speech)], 0, "127.0.0.1", {
      interceptors: [needsKey],
    });
    plain = plainClient("speech", server.port);
  });

  after(async () => {
    plain?.close();
    await server?.close();
  });

  it("frames an audio message exactly as protobuf would, around the producer's own bytes", () => {
    const encode = directBytesEncoder(SynthesizeResponseSchema);
    for (const audio of PIECES) {
      const message = create(SynthesizeResponseSchema, { event: { case: "audio", value: audio } });
      const direct = encode(message);
      expect(direct?.bytes).to.equal(audio);
      const body = toBinary(SynthesizeResponseSchema, message);
      const frame = Buffer.alloc(5 + body.byteLength);
      frame.writeUInt32BE(body.byteLength, 1);
      frame.set(body, 5);
      expect(Buffer.concat([direct?.prefix ?? Buffer.alloc(0), audio])).to.deep.equal(frame);
    }
    // The start event is protobuf's to encode.
    const start = create(SynthesizeResponseSchema, { event: { case: "start", value: {} } });
    expect(encode(start)).to.equal(undefined);
  });

  it("streams Synthesize to a plain @grpc/grpc-js client with its key, byte for byte", async () => {
    const messages = await serverStream(plain, "Synthesize", REQUEST, metadata({ key: KEY }));
    expect(messages[0]?.start).to.be.an("object");
    expect(audioOf(messages)).to.deep.equal(PIECES.map((p) => Buffer.from(p)));
    const refused = await statusOf(serverStream(plain, "Synthesize", REQUEST, metadata()));
    expect(refused).to.deep.equal({
      code: grpc.status.UNAUTHENTICATED,
      details: "a key is required",
    });
  });

  for (const [name, transport] of [
    [
      "Connect's gRPC transport",
      (port: number) =>
        createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}`, acceptCompression: [] }),
    ],
    [
      "the grpc-js transport",
      (port: number) =>
        createGrpcJsTransport({
          baseUrl: `http://127.0.0.1:${port}`,
          maxMessageBytes: GRPC_MAX_MESSAGE_BYTES,
        }),
    ],
    [
      "the gateway's node:http2 transport",
      (port: number) =>
        createHttp2GrpcTransport({
          baseUrl: `http://127.0.0.1:${port}`,
          maxMessageBytes: GRPC_MAX_MESSAGE_BYTES,
        }),
    ],
    [
      "Connect's own protocol (served by Connect's adapter)",
      (port: number) =>
        createConnectTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion: "2" }),
    ],
  ] as const) {
    it(`streams to ${name}: messages, response header and trailer, and typed errors`, async () => {
      const client = createClient(SpeechService, transport(server.port));
      const headers = { authorization: `Bearer ${KEY}` };
      let header: Headers | undefined;
      let trailer: Headers | undefined;
      const audio: Uint8Array[] = [];
      for await (const m of client.synthesize(
        { model: REQUEST.model, input: { case: "text", value: "Hello." }, voice: "alloy" },
        { headers, onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) },
      )) {
        if (m.event.case === "audio") audio.push(m.event.value);
      }
      expect(audio.map((a) => Buffer.from(a))).to.deep.equal(PIECES.map((p) => Buffer.from(p)));
      expect(header?.get("x-answered-by")).to.equal("direct-test");
      expect(trailer?.get("x-pieces")).to.equal("3");
      const err = await (async () => {
        for await (const _ of client.synthesize({ voice: "unknown" }, { headers })) {
          // nothing arrives
        }
      })().catch((e: unknown) => ConnectError.from(e));
      expect(err).to.be.instanceOf(ConnectError);
      expect((err as ConnectError).code).to.equal(Code.NotFound);
      expect((err as ConnectError).rawMessage).to.equal("voice unknown is not offered");
      expect((err as ConnectError).metadata.get("x-refusal")).to.equal("voice");
    });
  }

  /** A SpeechService client over the gateway's own node:http2 transport. */
  const gatewayClient = () =>
    createClient(
      SpeechService,
      createHttp2GrpcTransport({
        baseUrl: `http://127.0.0.1:${server.port}`,
        maxMessageBytes: GRPC_MAX_MESSAGE_BYTES,
      }),
    );

  it("asks for a clip's messages back to back while they fit the caller's window, without waiting for drain", async () => {
    // The stream answers false to write() past its 16 KiB high-water mark: taken for flow
    // control, the server waited a turn for "drain" every second message.
    const client = gatewayClient();
    clipTurns.length = 0;
    let bytes = 0;
    for await (const m of client.synthesize(
      { ...REQUEST, voice: "clip" },
      { headers: { authorization: `Bearer ${KEY}` } },
    )) {
      if (m.event.case === "audio") bytes += m.event.value.byteLength;
    }
    expect(bytes).to.equal(96_000);
    expect(clipTurns).to.deep.equal([0]);
  });

  it("holds a handler back once a caller that stops reading has a window and a buffer's worth", async () => {
    const client = gatewayClient();
    endlessMessages = 0;
    const ac = new AbortController();
    const messages = client
      .synthesize(
        { ...REQUEST, voice: "endless" },
        { headers: { authorization: `Bearer ${KEY}` }, signal: ac.signal },
      )
      [Symbol.asyncIterator]();
    await messages.next();
    const settled = await pollUntil(
      async () => {
        const before = endlessMessages;
        await new Promise((r) => setTimeout(r, 200));
        return endlessMessages === before ? endlessMessages : -1;
      },
      (n) => n >= 0,
    );
    // The caller's 256 KiB window, the server's 256 KiB buffer, and what the caller's
    // transport reads ahead: far below what an unbounded handler would produce in that time.
    expect(settled * 64 * 1024, "bytes produced while the caller did not read").to.be.lessThan(
      2 * 1024 * 1024,
    );
    ac.abort();
  });

  it("cancels the handler when a plain client cancels mid-stream, and its finally runs", async () => {
    ended.length = 0;
    const call = (
      plain.Synthesize as unknown as (
        r: unknown,
        md: grpc.Metadata,
      ) => grpc.ClientReadableStream<unknown>
    ).call(plain, { ...REQUEST, voice: "hang" }, metadata({ key: KEY }));
    const status = new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
    call.on("error", () => {});
    await new Promise((resolve) => call.once("data", resolve));
    call.cancel();
    expect((await status).code).to.equal(grpc.status.CANCELLED);
    await pollUntil(
      async () => ended.length,
      (n) => n === 1,
    );
    expect(ConnectError.from(ended[0]?.reason).code).to.equal(Code.Canceled);
  });

  it("ends a call at its deadline with DEADLINE_EXCEEDED, and the handler's finally runs", async () => {
    ended.length = 0;
    const { code } = await statusOf(
      new Promise((resolve, reject) => {
        const call = plain.makeServerStreamRequest(
          "/railgate.speech.v1.SpeechService/Synthesize",
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.from(
            toBinary(SynthesizeRequestSchema, create(SynthesizeRequestSchema, { voice: "hang" })),
          ),
          metadata({ key: KEY }),
          { deadline: Date.now() + 300 },
        );
        call.on("data", () => {});
        call.on("error", reject);
        call.on("end", resolve);
      }),
    );
    expect(code).to.equal(grpc.status.DEADLINE_EXCEEDED);
    await pollUntil(
      async () => ended.length,
      (n) => n === 1,
    );
    expect([Code.DeadlineExceeded, Code.Canceled]).to.include(
      ConnectError.from(ended[0]?.reason).code,
    );
  });

  it("refuses a request over its read limit with RESOURCE_EXHAUSTED, and serves the next call", async () => {
    const direct = createDirectHandler({
      services: [served(SpeechService, speech)],
      interceptors: [],
      readMaxBytes: 1024,
      contextValues: () => createContextValues(),
    });
    const h2 = http2.createServer();
    h2.on("stream", (stream, headers) => {
      if (!direct(stream, headers)) stream.respond({ ":status": 404 }, { endStream: true });
    });
    await new Promise<void>((resolve) => h2.listen(0, "127.0.0.1", resolve));
    const client = plainClient("speech", (h2.address() as AddressInfo).port);
    try {
      const tooLarge = await statusOf(
        serverStream(client, "Synthesize", { ...REQUEST, text: "x".repeat(5000) }, metadata()),
      );
      expect(tooLarge.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
      expect(tooLarge.details).to.match(/readMaxBytes 1024/);
      const messages = await serverStream(client, "Synthesize", REQUEST, metadata());
      expect(audioOf(messages)).to.have.length(PIECES.length);
    } finally {
      client.close();
      await new Promise((resolve) => h2.close(resolve));
    }
  });
});
