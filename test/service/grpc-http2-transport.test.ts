import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { expect } from "chai";
import {
  SpeechService,
  SynthesizeResponseSchema,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import {
  CONNECTION_WINDOW_BYTES,
  STREAM_WINDOW_BYTES,
} from "../../platform/rpc/http2-grpc-session.js";
import { createHttp2GrpcTransport } from "../../platform/rpc/http2-grpc-transport.js";
import { pollUntil } from "../kit/poll.js";

/** One framed SynthesizeResponse carrying `n` bytes of audio, each `fill`. */
function audioFrame(n: number, fill: number): Buffer {
  const body = toBinary(
    SynthesizeResponseSchema,
    create(SynthesizeResponseSchema, {
      event: { case: "audio", value: new Uint8Array(n).fill(fill) },
    }),
  );
  const frame = Buffer.alloc(5 + body.byteLength);
  frame.writeUInt32BE(body.byteLength, 1);
  frame.set(body, 5);
  return frame;
}

type Handler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void;

/** A bare HTTP/2 server whose answers each test writes byte by byte, as a peer might. */
async function rawServer(handler: Handler) {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  const sockets = new Set<import("node:net").Socket>();
  server.on("connection", (socket: import("node:net").Socket) => sockets.add(socket));
  let opened = 0;
  server.on("session", (s) => {
    opened++;
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => {});
    // The request is read whole before the answer, as a unary or server-stream handler does.
    stream.resume();
    stream.once("end", () => handler(stream, headers));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sessions,
    opened: () => opened,
    /** Ends every connection as a killed process's would end. */
    kill: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const REQUEST = { model: "m", input: { case: "text" as const, value: "hi" }, voice: "alloy" };

async function collect(client: ReturnType<typeof createClient<typeof SpeechService>>) {
  const audio: number[] = [];
  for await (const m of client.synthesize(REQUEST)) {
    if (m.event.case === "audio") audio.push(m.event.value.byteLength);
  }
  return audio;
}

describe("the gateway's node:http2 gRPC transport, on the wire", () => {
  let server: Awaited<ReturnType<typeof rawServer>> | undefined;
  let transport: ReturnType<typeof createHttp2GrpcTransport> | undefined;
  afterEach(async () => {
    transport?.close();
    await server?.close();
    server = undefined;
    transport = undefined;
  });

  function clientOf(url: string, maxMessageBytes = 1024 * 1024) {
    // One connection, so a test can tell a fresh one from the first.
    transport = createHttp2GrpcTransport({
      baseUrl: url,
      maxMessageBytes,
      pool: { connectionsPerAddress: 1 },
    });
    return createClient(SpeechService, transport);
  }

  it("sends the gRPC request headers and cuts messages that share or span DATA chunks", async () => {
    let seen: http2.IncomingHttpHeaders | undefined;
    server = await rawServer((stream, headers) => {
      seen = headers;
      stream.respond(
        { ":status": 200, "content-type": "application/grpc" },
        { waitForTrailers: true },
      );
      stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      const frames = Buffer.concat([audioFrame(3, 1), audioFrame(5, 2), audioFrame(20_000, 3)]);
      // Two whole frames and a few bytes of the third, then its prefix split, then the rest.
      const cuts = [
        frames.byteLength - 20_000 - 2,
        frames.byteLength - 20_000 + 4,
        frames.byteLength,
      ];
      let at = 0;
      const next = () => {
        const end = cuts.shift();
        if (end === undefined) {
          stream.end();
          return;
        }
        stream.write(frames.subarray(at, end));
        at = end;
        setTimeout(next, 5);
      };
      next();
    });
    expect(await collect(clientOf(server.url))).to.deep.equal([3, 5, 20_000]);
    expect(seen?.["content-type"]).to.equal("application/grpc");
    expect(seen?.te).to.equal("trailers");
    expect(seen?.["user-agent"]).to.match(/^grpc-node-railgate\//);
    expect(seen?.["grpc-timeout"], "a stream has no deadline unless asked").to.equal(undefined);
  });

  it("lets a service send a whole clip before the caller reads it (256 KiB stream, 16 MiB connection windows)", async () => {
    let lastSent = false;
    let peer: http2.Http2Session | undefined;
    const FRAMES = 50;
    server = await rawServer((stream) => {
      peer = stream.session;
      stream.respond(
        { ":status": 200, "content-type": "application/grpc" },
        { waitForTrailers: true },
      );
      stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      // 50 messages of 4 kB, about 205 kB: more than HTTP/2's default windows (64 KiB a stream,
      // 64 KiB a connection) and the transport's read-ahead (8 messages) let out unread.
      for (let i = 1; i < FRAMES; i++) stream.write(audioFrame(4096, 1));
      stream.write(audioFrame(4096, 2), () => {
        lastSent = true;
      });
      stream.end();
    });
    const messages = clientOf(server.url).synthesize(REQUEST)[Symbol.asyncIterator]();
    expect((await messages.next()).done).to.equal(false);
    // The caller reads nothing more until the server has sent its last frame.
    expect(
      await pollUntil(
        async () => lastSent,
        (sent) => sent,
      ),
      "the last frame left the server while the caller held the first",
    ).to.equal(true);
    expect(peer?.remoteSettings.initialWindowSize).to.equal(STREAM_WINDOW_BYTES);
    expect(peer?.state.remoteWindowSize).to.be.above(CONNECTION_WINDOW_BYTES - 1024 * 1024);
    let rest = 0;
    for (let m = await messages.next(); !m.done; m = await messages.next()) rest++;
    expect(rest, "the other messages arrive whole").to.equal(FRAMES - 1);
  });

  it("fails a trailers-only answer with its status, and a non-gRPC answer by its HTTP status", async () => {
    server = await rawServer((stream, headers) => {
      if (headers[":path"]?.endsWith("/Synthesize")) {
        stream.respond(
          { ":status": 200, "grpc-status": String(Code.NotFound), "grpc-message": "no%20voice" },
          { endStream: true },
        );
      } else stream.respond({ ":status": 503 }, { endStream: true });
    });
    const client = clientOf(server.url);
    const err = await collect(client).catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).code).to.equal(Code.NotFound);
    expect((err as ConnectError).rawMessage).to.equal("no voice");
    const unary = await client.listModels({}).catch((e: unknown) => ConnectError.from(e));
    expect((unary as ConnectError).code).to.equal(Code.Unavailable);
  });

  it("refuses a response message over its limit with ResourceExhausted", async () => {
    server = await rawServer((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      stream.end(audioFrame(5000, 1));
    });
    const err = await collect(clientOf(server.url, 1024)).catch((e: unknown) =>
      ConnectError.from(e),
    );
    expect((err as ConnectError).code).to.equal(Code.ResourceExhausted);
  });

  it("answers Unavailable when nothing listens, and when the connection drops mid-stream", async () => {
    const closed = await rawServer(() => {});
    const url = closed.url;
    await closed.close();
    const refused = await clientOf(url)
      .listModels({})
      .catch((e: unknown) => ConnectError.from(e));
    expect((refused as ConnectError).code).to.equal(Code.Unavailable);
    transport?.close();
    server = await rawServer((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      stream.write(audioFrame(10, 1));
      // The process "dies": its socket goes away with the call half done.
      setTimeout(() => server?.kill(), 20);
    });
    const dropped = await collect(clientOf(server.url)).catch((e: unknown) => ConnectError.from(e));
    expect((dropped as ConnectError).code).to.equal(Code.Unavailable);
  });

  it("reads a stream a few messages ahead: a slow caller holds the server back; an abort resets the stream", async () => {
    const TOTAL = 200;
    let written = 0;
    let cancelled = false;
    server = await rawServer((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      stream.on("close", () => {
        cancelled = stream.rstCode === http2.constants.NGHTTP2_CANCEL;
      });
      const write = () => {
        while (written < TOTAL && !stream.destroyed) {
          written++;
          if (!stream.write(audioFrame(64 * 1024, 1))) {
            stream.once("drain", write);
            return;
          }
        }
        if (!stream.destroyed) stream.end();
      };
      write();
    });
    const ac = new AbortController();
    const messages = clientOf(server.url)
      .synthesize(REQUEST, { signal: ac.signal })
      [Symbol.asyncIterator]();
    await messages.next();
    await new Promise((r) => setTimeout(r, 200));
    expect(written, "flow control held the server back").to.be.below(TOTAL / 4);
    // A caller gives up on a stream by aborting its signal (typed-client.ts).
    ac.abort();
    // What was read ahead is still handed out; then the call's end.
    let err: ConnectError | undefined;
    for (let i = 0; i < 20 && !err; i++) {
      err = await messages.next().then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    }
    expect(err?.code).to.equal(Code.Canceled);
    expect(
      await pollUntil(
        async () => cancelled,
        (c) => c,
      ),
      "the server's stream was reset (CANCEL)",
    ).to.equal(true);
  });

  it("sends a call the server refused (REFUSED_STREAM) once more, on a fresh connection", async () => {
    let refused = 0;
    server = await rawServer((stream) => {
      if (refused++ === 0) {
        stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
        return;
      }
      stream.respond(
        { ":status": 200, "content-type": "application/grpc" },
        { waitForTrailers: true },
      );
      stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(audioFrame(2, 1));
    });
    expect(await collect(clientOf(server.url))).to.deep.equal([2]);
    expect(refused).to.equal(2);
    expect(server.opened(), "the refusing connection was left for a new one").to.equal(2);
  });

  it("opens a fresh connection for new calls once the server sends GOAWAY", async () => {
    server = await rawServer((stream) => {
      stream.respond(
        { ":status": 200, "content-type": "application/grpc" },
        { waitForTrailers: true },
      );
      stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(audioFrame(1, 1));
    });
    const client = clientOf(server.url);
    expect(await collect(client)).to.deep.equal([1]);
    const first = [...server.sessions];
    for (const s of first) s.goaway(http2.constants.NGHTTP2_NO_ERROR);
    await new Promise((r) => setTimeout(r, 20));
    expect(await collect(client)).to.deep.equal([1]);
    expect([...server.sessions].some((s) => !first.includes(s))).to.equal(true);
  });
});
