import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { audioContentType, isAudioFormatName } from "../../domain/audio-formats.js";
import {
  createAudioEncoder,
  encodeContainer,
  isContainerFormat,
} from "../../services/speech/audio/index.js";
import { sineTone } from "./audio.js";
import { sleep } from "./poll.js";

/** What the server does with the next request. */
export type Behaviour =
  | { kind: "audio" }
  | { kind: "status"; status: number }
  | { kind: "hang" }
  | { kind: "close" }
  /** Starts the clip, then drops the connection after this many pieces. */
  | { kind: "cut"; afterChunks: number };

/** One request as the provider saw it, and how its answer ended. */
export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: bodies are arbitrary JSON the tests inspect
  body: any;
  /** Audio pieces written before the answer ended. */
  chunksSent: number;
  /**
   * "finished" when the whole clip went out, "closed-early" when the client
   * went away first (a cancelled synthesis), "errored" for error statuses.
   */
  outcome: Promise<"finished" | "closed-early" | "errored">;
}

export interface FakeOpenAiOptions {
  behaviour?: Behaviour;
  /** When set, requests without `Authorization: Bearer <apiKey>` get 401. */
  apiKey?: string;
  /** Pieces a clip is streamed in. */
  chunks?: number;
  /** Pause between pieces, so the clip really arrives over time. */
  chunkDelayMs?: number;
  /** Length of the generated clip per input character (capped at 20 s). */
  secondsPerChar?: number;
  /** Pause before the response head, so the provider's first byte is late (a slow start). */
  headDelayMs?: number;
}

/** The clip for an input: a tone whose length grows with the text, so durations are plausible. */
export function clipSeconds(input: string, secondsPerChar = 0.05): number {
  return Math.min(20, Math.max(0.25, input.length * secondsPerChar));
}

async function* toneOnce(tone: Int16Array): AsyncGenerator<Int16Array> {
  yield tone;
}

async function encodeClip(format: string, seconds: number): Promise<Uint8Array> {
  const tone = sineTone(seconds);
  if (isAudioFormatName(format) && isContainerFormat(format)) {
    const pieces: Uint8Array[] = [];
    for await (const bytes of encodeContainer(format, toneOnce(tone))) {
      pieces.push(bytes);
    }
    return Buffer.concat(pieces);
  }
  if (format === "mp3") {
    const encoder = await createAudioEncoder("mp3");
    const head = encoder.encode(tone);
    const tail = encoder.flush();
    return Buffer.concat([head, tail]);
  }
  return new Uint8Array(tone.buffer, tone.byteOffset, tone.byteLength);
}

/**
 * A small OpenAI-compatible speech provider on 127.0.0.1:0 that records
 * every request body it receives, so tests can assert exactly what reached
 * the provider, and that can be told to fail in the ways real providers do.
 */
export class FakeOpenAi {
  readonly requests: ReceivedRequest[] = [];
  behaviour: Behaviour;
  /** What the next requests do, one each, before `behaviour` applies again (503, then audio...). */
  readonly script: Behaviour[] = [];
  /** TCP connections accepted so far (never reset: pooled sockets outlive a test). */
  connections = 0;
  /** TCP connections open right now. */
  openConnections = 0;
  private readonly server: Server;
  private port = 0;

  constructor(private readonly options: FakeOpenAiOptions = {}) {
    this.behaviour = options.behaviour ?? { kind: "audio" };
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          body = Buffer.concat(chunks).toString("utf8");
        }
        let settle: (v: "finished" | "closed-early" | "errored") => void = () => {};
        const record: ReceivedRequest = {
          path: req.url ?? "",
          headers: req.headers,
          body,
          chunksSent: 0,
          outcome: new Promise((r) => {
            settle = r;
          }),
        };
        this.requests.push(record);
        let done = false;
        // Registered before any byte goes out: a client that leaves mid-clip is always seen.
        res.on("close", () => {
          if (!done) settle("closed-early");
        });
        const finish = (how: "finished" | "errored") => {
          done = true;
          settle(how);
        };
        this.answer(req.url ?? "", req.headers, body, record, res, finish).catch(() => {
          res.destroy();
        });
      });
    });
  }

  private async answer(
    path: string,
    headers: IncomingHttpHeaders,
    // biome-ignore lint/suspicious/noExplicitAny: request JSON
    body: any,
    record: ReceivedRequest,
    res: ServerResponse,
    finish: (how: "finished" | "errored") => void,
  ): Promise<void> {
    const error = (status: number, message: string) => {
      const data = JSON.stringify({ error: { message, type: "fake_error", code: status } });
      res.writeHead(status, { "content-type": "application/json" });
      res.end(data, () => finish("errored"));
    };
    if (path !== "/v1/audio/speech") return error(404, `no route ${path}`);
    if (this.options.apiKey && headers.authorization !== `Bearer ${this.options.apiKey}`) {
      return error(401, "Incorrect API key provided");
    }
    const behaviour = this.script.shift() ?? this.behaviour;
    if (this.options.headDelayMs) await sleep(this.options.headDelayMs);
    if (behaviour.kind === "status")
      return error(behaviour.status, `fake status ${behaviour.status}`);
    if (behaviour.kind === "hang") return; // never answers: the caller's time-out must fire
    if (behaviour.kind === "close") {
      res.socket?.destroy();
      return;
    }
    // Like OpenAI: the format asked for (and pcm, Railgate's default, for anything else).
    const asked = body?.response_format;
    const format = isAudioFormatName(asked) && asked !== "wav" ? asked : "pcm";
    const seconds = clipSeconds(String(body?.input ?? ""), this.options.secondsPerChar);
    const clip = await encodeClip(format, seconds);
    res.writeHead(200, { "content-type": audioContentType(format) });
    const pieces = this.options.chunks ?? 4;
    // Even piece sizes keep every PCM piece whole samples.
    const size = Math.ceil(clip.byteLength / pieces / 2) * 2;
    for (let offset = 0; offset < clip.byteLength; offset += size) {
      if (res.destroyed) return;
      if (behaviour.kind === "cut" && record.chunksSent === behaviour.afterChunks) {
        res.socket?.destroy();
        return;
      }
      res.write(clip.subarray(offset, offset + size));
      record.chunksSent++;
      await sleep(this.options.chunkDelayMs ?? 2);
    }
    if (res.destroyed) return;
    res.end(() => finish("finished"));
  }

  async start(): Promise<this> {
    this.server.on("connection", (socket) => {
      this.connections++;
      this.openConnections++;
      socket.once("close", () => this.openConnections--);
    });
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(0, "127.0.0.1", () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** What a catalog's `base_url` points at. */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Forgets what was received, and answers normally again. */
  reset(): void {
    this.requests.length = 0;
    this.script.length = 0;
    this.behaviour = this.options.behaviour ?? { kind: "audio" };
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
