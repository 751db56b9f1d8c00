import { once } from "node:events";
import {
  createServer,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import type { RequestContext } from "../../../gateway/context.js";
import { streamSpeech } from "../../../gateway/speech-stream.js";
import { AudioFormat } from "../../../gen/railgate/speech/v1/speech_pb.js";
import type { SynthesizeRequest } from "../../../gen/railgate/speech/v1/speech_service_pb.js";
import { audioMessage, startMessage } from "../../../services/speech/messages.js";

type Step = () => Promise<IteratorResult<unknown>>;

/**
 * The gateway's side of a speech stream against a scripted service: what reaches the socket,
 * in how many writes.
 */
describe("gateway: speech stream writes", () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.close();
    server = undefined;
  });

  /** What streamSpeech reads of a request, around a scripted service stream. */
  function contextOf(
    req: IncomingMessage,
    res: ServerResponse,
    stream: AsyncIterator<unknown>,
    idleTimeoutMs = 5_000,
  ): RequestContext {
    const abort = new AbortController();
    // As the gateway's app: only a response that did not finish means the client went away.
    res.on("close", () => {
      if (!res.writableFinished) abort.abort(new Error("client gone"));
    });
    return {
      req,
      res,
      speechStream: { firstMessageTimeoutMs: 5_000, idleTimeoutMs },
      signal: abort.signal,
      abort: (reason: Error) => abort.abort(reason),
      call: { signal: abort.signal, headers: {} },
      clients: { speech: { synthesize: () => ({ [Symbol.asyncIterator]: () => stream }) } },
    } as unknown as RequestContext;
  }

  /** Serves one POST with `handle` on a fresh server, and answers its response. */
  async function post(
    handle: (req: IncomingMessage, res: ServerResponse) => void,
  ): Promise<IncomingMessage> {
    server = createServer(handle);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    return new Promise<IncomingMessage>((resolve, reject) => {
      request({ port, host: "127.0.0.1", method: "POST", path: "/" }, resolve)
        .on("error", reject)
        .end();
    });
  }

  async function relay(steps: Step[]): Promise<{ writes: Buffer[]; body: Buffer }> {
    const writes: Buffer[] = [];
    const res = await post((req, res) => {
      // Every socket write, as node:http hands it to the kernel (one writev = one entry).
      const socket = res.socket as unknown as {
        _writeGeneric(writev: boolean, data: unknown, encoding: string, cb: unknown): void;
      };
      const generic = socket._writeGeneric;
      socket._writeGeneric = function (writev, data, encoding, cb) {
        const parts = writev
          ? (data as { chunk: string | Buffer; encoding: BufferEncoding }[]).map((c) =>
              Buffer.from(c.chunk as never, c.encoding),
            )
          : [Buffer.from(data as never, encoding as BufferEncoding)];
        writes.push(Buffer.concat(parts));
        return generic.call(this, writev, data, encoding, cb);
      };
      let i = 0;
      const stream = { next: () => (steps[i++] as Step)() };
      void streamSpeech(contextOf(req, res, stream), {} as SynthesizeRequest);
    });
    const parts: Buffer[] = [];
    for await (const part of res) parts.push(part as Buffer);
    expect(res.statusCode).to.equal(200);
    return { writes, body: Buffer.concat(parts) };
  }

  const start = startMessage({
    format: AudioFormat.PCM,
    contentType: "audio/pcm",
    sampleRate: 24000,
    channels: 1,
    generationId: "gen-1",
    model: "m",
    provider: "p",
  });
  const now =
    (value: unknown): Step =>
    () =>
      Promise.resolve({ done: false, value });
  const nextTurn =
    (value: unknown): Step =>
    () =>
      new Promise((resolve) => setImmediate(() => resolve({ done: false, value })));
  // A Node stream (an upstream's body) signals its end a tick after its last chunk.
  const endAfterTick: Step = () =>
    new Promise((resolve) => process.nextTick(() => resolve({ done: true, value: undefined })));

  it("sends the last chunk and the chunked terminator in one write", async () => {
    const a = Buffer.alloc(1000, 1);
    const b = Buffer.alloc(1000, 2);
    const { writes, body } = await relay([
      now(start),
      now(audioMessage(a)),
      nextTurn(audioMessage(b)),
      endAfterTick,
    ]);
    expect(body).to.deep.equal(Buffer.concat([a, b]));
    // The head with the first chunk; the second chunk with the terminator.
    expect(writes).to.have.length(2);
    const last = writes[1] as Buffer;
    expect(last.includes(b)).to.equal(true);
    expect(last.subarray(-5).toString("latin1")).to.equal("0\r\n\r\n");
  });

  it("goes on past a turn's chunks over the response's high-water mark, and ends", async () => {
    // Four 20 kB chunks in one turn fill the 16 kB buffer: write() answers false. Since Node 21
    // (the image's Node 22) a corked response buffered them itself and no "drain" ever came:
    // the stream hung with its audio sent and no terminator. This test then times out.
    const chunks = [1, 2, 3, 4].map((n) => Buffer.alloc(20_000, n));
    const { body } = await relay([
      now(start),
      ...chunks.map((c) => now(audioMessage(c))),
      endAfterTick,
    ]);
    expect(body).to.deep.equal(Buffer.concat(chunks));
  });

  it("merges chunks that arrive in the same event-loop turn into one write", async () => {
    const chunks = [1, 2, 3].map((n) => Buffer.alloc(500, n));
    const { writes, body } = await relay([
      now(start),
      ...chunks.map((c) => now(audioMessage(c))),
      endAfterTick,
    ]);
    expect(body).to.deep.equal(Buffer.concat(chunks));
    expect(writes).to.have.length(1);
  });
  it("writes a turn's chunks past the high-water mark corked: ten 9.6 kB chunks in one turn are two socket writes", async () => {
    // While the socket is corked, write() answers false past 16 kB though nothing tried the
    // socket: taken for backpressure, that was a socket write and a wait for "drain" every
    // second chunk (6 writes here).
    const chunks = Array.from({ length: 10 }, (_, n) => Buffer.alloc(9_600, n + 1));
    const { writes, body } = await relay([
      now(start),
      ...chunks.map((c) => now(audioMessage(c))),
      endAfterTick,
    ]);
    expect(body).to.deep.equal(Buffer.concat(chunks));
    expect(writes).to.have.length(2);
  });

  it("stops reading the service while a client does not read, and goes on when it does", async function () {
    this.timeout(20_000);
    const chunk = Buffer.alloc(65_536, 7);
    let served = 0;
    let stopped = false;
    // Each chunk in a turn of its own, as fast as the gateway asks, until `stopped`.
    const stream = {
      next: (): Promise<IteratorResult<unknown>> => {
        if (served === 0) {
          served++;
          return Promise.resolve({ done: false, value: start });
        }
        if (stopped) return Promise.resolve({ done: true, value: undefined });
        served++;
        return new Promise((resolve) =>
          setImmediate(() => resolve({ done: false, value: audioMessage(chunk) })),
        );
      },
      return: () => Promise.resolve({ done: true as const, value: undefined }),
    };
    const res = await post((req, res) => {
      void streamSpeech(contextOf(req, res, stream, 60_000), {} as SynthesizeRequest).catch(
        () => {},
      );
    });
    res.pause();
    // The kernel's socket buffers take a few MB; then the gateway must stop asking.
    const settle = async () => {
      for (let last = -1; last !== served; ) {
        last = served;
        await new Promise((r) => setTimeout(r, 300));
      }
      return served;
    };
    const stalled = await settle();
    expect(stalled * chunk.byteLength, "bytes taken from the service").to.be.lessThan(64 * 2 ** 20);
    // Reading again: the stream goes on.
    let read = 0;
    res.on("data", (d: Buffer) => {
      read += d.byteLength;
    });
    res.resume();
    while (served < stalled + 50) await new Promise((r) => setTimeout(r, 20));
    stopped = true;
    await once(res, "end");
    expect(read).to.equal((served - 1) * chunk.byteLength);
  });
});
