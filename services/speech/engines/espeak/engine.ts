import { availableParallelism, totalmem } from "node:os";
import { trackEngineQueue } from "../../../../domain/metrics.js";
import { componentLogger } from "../../../../platform/observability/logger.js";
import type { AudioFormat } from "../../audio/format.js";
import { UnknownVoiceError } from "./errors.js";
import { type EspeakVoice, readEspeakData } from "./espeak-wasm.js";
import type { EncodedAudio, EspeakJob, EspeakJobResult } from "./jobs.js";
import { splitSentences, withShortLead } from "./sentences.js";
import { wordsPerMinute } from "./speech-rate.js";
import { type WorkerLease, WorkerPool } from "./worker-pool.js";

export interface EspeakSegment {
  text: string;
  /** eSpeak's voice id, e.g. "gmw/en-US". */
  voice: string;
}

export interface EspeakSpeakOptions {
  /** 0.25..4, 1 = normal; see `wordsPerMinute` for how it maps onto eSpeak's rate. */
  speed: number;
  /** What the audio comes out as (default pcm: 16-bit little-endian mono at SAMPLE_RATE). */
  format?: AudioFormat;
  signal?: AbortSignal;
  /** Cut a long first sentence short so the first audio leaves sooner (default true). */
  shortLead?: boolean;
  /**
   * Told the characters of each piece once its audio has all been taken by the
   * consumer: what a stream cut short actually delivered (billing).
   */
  onSpoken?: (characters: number) => void;
}

export interface EspeakSynthesisOptions extends EspeakSpeakOptions {
  voice: string;
}

export interface EspeakEngineOptions {
  /** Worker threads, each holding its own eSpeak instance; defaults to `defaultPoolSize()`. */
  poolSize?: number;
  /** A sentence still synthesizing after this long has its worker replaced. */
  jobTimeoutMs?: number;
  /** Live mp3 streams (each with its encoder) per worker; more wait their turn. */
  mp3StreamsPerWorker?: number;
}

/**
 * Sentences dispatched ahead of the one being read, so the next chunk is usually ready by the
 * time the consumer asks for it, while one stream cannot flood the pool.
 */
const LOOKAHEAD = 2;
const DEFAULT_JOB_TIMEOUT_MS = 30_000;

/*
 * The memory rule (measured on the engine alone and with `BENCH_ONLY=engine-memory npm run
 * bench`; docs/benchmarks.md "The embedded engine's sizing", bench/HISTORY.md for the runs):
 * - a worker costs about WORKER_MB: 25-30 MB resident at rest (eSpeak's heap and compiled code,
 *   the resampler, warm LAME code; the 24 MB of voice data is read once and shared by every
 *   worker) plus its share of audio in flight under load;
 * - each live mp3 stream holds one LAME encoder in its worker (MP3_STREAM_MB resident of its
 *   ~2.4 MB of wasm memory) for as long as the stream lasts;
 * - pcm needs no state between pieces, and each stream buffers at most LOOKAHEAD + 1 pieces.
 * So the pool is no larger than ENGINE_MEMORY_SHARE of the machine's (or cgroup's) memory holds,
 * and a worker serves at most MP3_STREAMS_PER_WORKER mp3 streams at once (about 20 MB of
 * encoders); further mp3 streams wait for one to finish rather than grow the process unbounded.
 */
const WORKER_MB = 40;
const MP3_STREAM_MB = 1.3;
const MP3_STREAMS_PER_WORKER = 16;
const ENGINE_MEMORY_SHARE = 0.25;
/**
 * Audio passes through a worker in ArrayBuffers (eSpeak's blocks, the blocks sent out), which V8
 * frees only when it collects the small objects that own them. With Node's default young
 * generation a busy worker carried tens of MB of dead audio between collections (engine alone, 50
 * pcm streams: peak 252-265 MB, against 191-200 MB with this); a 2 MB one collects every few
 * hundred blocks, cheaply, since almost nothing survives.
 */
const WORKER_YOUNG_GENERATION_MB = 2;

/** One worker per core, but no more than a quarter of the machine's memory can hold. */
export function defaultPoolSize(
  cores = availableParallelism(),
  memoryBytes = process.constrainedMemory?.() || totalmem(),
): number {
  const budgetMb = (memoryBytes / 2 ** 20) * ENGINE_MEMORY_SHARE;
  const perWorkerMb = WORKER_MB + MP3_STREAMS_PER_WORKER * MP3_STREAM_MB;
  return Math.max(1, Math.min(cores, Math.floor(budgetMb / perWorkerMb)));
}

function isAudio(result: EspeakJobResult): result is EncodedAudio {
  return !Array.isArray(result) && result.bytes instanceof Uint8Array;
}

/** One piece's audio as its worker streams it, read back in order. */
class PieceAudio implements AsyncIterable<EncodedAudio> {
  #chunks: EncodedAudio[] = [];
  #ended = false;
  #failed = false;
  #error: unknown;
  #wake?: () => void;

  push(chunk: EncodedAudio): void {
    this.#chunks.push(chunk);
    this.#wake?.();
  }

  finish(result: EspeakJobResult): void {
    if (!isAudio(result)) {
      this.fail(
        new Error("eSpeak worker answered a synthesis job with something other than audio"),
      );
      return;
    }
    this.#chunks.push(result);
    this.#ended = true;
    this.#wake?.();
  }

  fail(error: unknown): void {
    this.#failed = true;
    this.#error = error;
    this.#ended = true;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<EncodedAudio> {
    for (;;) {
      const chunk = this.#chunks.shift();
      if (chunk !== undefined) {
        yield chunk;
      } else if (this.#failed) {
        throw this.#error;
      } else if (this.#ended) {
        return;
      } else {
        await new Promise<void>((wake) => {
          this.#wake = wake;
        });
        this.#wake = undefined;
      }
    }
  }
}

/** eSpeak NG running in a pool of worker threads, streaming audio encoded in the workers. */
export class EspeakEngine {
  readonly #pool: WorkerPool<EspeakJob, EspeakJobResult, EncodedAudio>;
  readonly #voices: ReadonlyMap<string, EspeakVoice>;
  /** Stops counting this pool in the engine queue gauge (tests start and close many). */
  readonly #untrack: () => void;
  #nextStream = 1;

  private constructor(
    pool: WorkerPool<EspeakJob, EspeakJobResult, EncodedAudio>,
    voices: ReadonlyMap<string, EspeakVoice>,
  ) {
    this.#pool = pool;
    this.#voices = voices;
    this.#untrack = trackEngineQueue(() => pool.queued);
  }

  static async start(options: EspeakEngineOptions = {}): Promise<EspeakEngine> {
    const pool = await WorkerPool.start<EspeakJob, EspeakJobResult, EncodedAudio>({
      url: new URL("./worker.js", import.meta.url),
      size: options.poolSize ?? defaultPoolSize(),
      jobTimeoutMs: options.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS,
      logger: componentLogger("espeak-engine"),
      workerData: { espeakData: await readEspeakData() },
      maxLeasesPerWorker: options.mp3StreamsPerWorker ?? MP3_STREAMS_PER_WORKER,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    try {
      const voices = await pool.run({ type: "voices" });
      if (!Array.isArray(voices) || voices.length === 0) {
        throw new Error("eSpeak NG reported no voices");
      }
      return new EspeakEngine(pool, new Map(voices.map((voice) => [voice.id, voice])));
    } catch (error) {
      await pool.close();
      throw error;
    }
  }

  /** Copies, so callers cannot change the catalogue. */
  voices(): EspeakVoice[] {
    return [...this.#voices.values()].map((voice) => ({
      ...voice,
      languages: [...voice.languages],
    }));
  }

  hasVoice(id: string): boolean {
    return this.#voices.has(id);
  }

  /** `speak` with a single voice. */
  synthesize(text: string, options: EspeakSynthesisOptions): AsyncIterable<EncodedAudio> {
    return this.speak([{ text, voice: options.voice }], options);
  }

  /**
   * Streams the speech for the segments, one after another, sentence by sentence, as one audio
   * stream in `format`. Throws UnknownVoiceError or a RangeError (bad speed) right away, before
   * any work is queued.
   */
  speak(
    segments: readonly EspeakSegment[],
    options: EspeakSpeakOptions,
  ): AsyncIterable<EncodedAudio> {
    for (const segment of segments) {
      if (!this.#voices.has(segment.voice)) {
        throw new UnknownVoiceError(segment.voice);
      }
    }
    const rate = wordsPerMinute(options.speed);
    const pieces = segments.flatMap(({ text, voice }) =>
      splitSentences(text).map((piece) => ({ text: piece, voice })),
    );
    if (options.shortLead !== false && pieces.length > 0) {
      const [first, ...rest] = withShortLead([pieces[0].text]);
      pieces.splice(0, 1, ...[first, ...rest].map((text) => ({ text, voice: pieces[0].voice })));
    }
    return this.#stream(pieces, options.format ?? "pcm", rate, options.signal, options.onSpoken);
  }

  /** Throws when no worker can take a job (health checks: nothing could be synthesized). */
  checkHealth(): void {
    if (this.#pool.readyWorkers === 0) throw new Error("no eSpeak worker is ready");
  }

  close(): Promise<void> {
    this.#untrack();
    return this.#pool.close();
  }

  async *#stream(
    pieces: EspeakSegment[],
    format: AudioFormat,
    rate: number,
    signal: AbortSignal | undefined,
    onSpoken: ((characters: number) => void) | undefined,
  ): AsyncGenerator<EncodedAudio> {
    signal?.throwIfAborted();
    if (pieces.length === 0) {
      return;
    }
    // Cancels this stream's outstanding jobs on abort, on error, and when the consumer stops early.
    const jobs = new AbortController();
    const forwardAbort = () => jobs.abort(signal?.reason);
    signal?.addEventListener("abort", forwardAbort, { once: true });

    // MP3 carries encoder state from one piece to the next (bit reservoir, filter history), so the
    // stream's encoder lives in one worker and every piece runs there. PCM pieces go anywhere.
    const stream = format === "pcm" ? undefined : this.#nextStream++;
    let lease: WorkerLease<EspeakJob> | undefined;
    const pending: PieceAudio[] = [];
    let next = 0;
    /** `waiting`: the consumer needs the first piece dispatched now (not read-ahead). */
    const dispatch = (limit: number, waiting: boolean) => {
      while (next < pieces.length && pending.length < limit) {
        const index = next++;
        const audio = new PieceAudio();
        this.#pool
          .run(
            {
              type: "synthesize",
              text: pieces[index].text,
              voice: pieces[index].voice,
              wordsPerMinute: rate,
              format,
              stream,
              first: index === 0,
              last: index === pieces.length - 1,
            },
            {
              signal: jobs.signal,
              // A piece a listener is waiting on goes before every stream's read-ahead.
              priority: waiting && pending.length === 0 ? "high" : "low",
              lease,
              onChunk: (chunk) => audio.push(chunk),
            },
          )
          .then(
            (result) => audio.finish(result),
            (error: unknown) => audio.fail(error),
          );
        pending.push(audio);
      }
    };

    let spoken = 0;
    try {
      if (stream !== undefined) {
        lease = await this.#pool.lease(jobs.signal);
      }
      // Read-ahead starts once the first audio is out: until then it would only compete with the
      // first piece (and the thread relaying it) for the CPU.
      dispatch(1, true);
      for (let piece = pending.shift(); piece !== undefined; piece = pending.shift()) {
        for await (const audio of piece) {
          if (audio.bytes.length > 0 || audio.samples > 0) {
            yield audio;
          }
          signal?.throwIfAborted();
          dispatch(LOOKAHEAD, false);
        }
        // The consumer came back for more: this piece's audio has all been delivered.
        onSpoken?.([...(pieces[spoken++]?.text ?? "")].length);
        dispatch(LOOKAHEAD + 1, true);
      }
    } finally {
      signal?.removeEventListener("abort", forwardAbort);
      jobs.abort();
      // Frees the encoder even when the stream stopped early (it is gone already after the last piece).
      if (stream !== undefined) {
        lease?.release({ type: "end-stream", stream });
      }
    }
  }
}
