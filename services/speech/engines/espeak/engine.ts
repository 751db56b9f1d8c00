import { availableParallelism } from "node:os";
import { componentLogger } from "../../../common/logger.js";
import { UnknownVoiceError } from "./errors.js";
import type { EspeakVoice } from "./espeak-wasm.js";
import type { EspeakJob, EspeakJobResult } from "./jobs.js";
import { splitSentences, withShortLead } from "./sentences.js";
import { wordsPerMinute } from "./speech-rate.js";
import { WorkerPool } from "./worker-pool.js";

export interface EspeakSynthesisOptions {
  voice: string;
  /** 0.25..4, 1 = normal; see `wordsPerMinute` for how it maps onto eSpeak's rate. */
  speed: number;
  signal?: AbortSignal;
  /** Cut a long first sentence short so the first audio leaves sooner (default true). */
  shortLead?: boolean;
  /**
   * Called with a sentence's length in characters once its audio has been taken by the
   * consumer: what a stream cut short has really delivered (and is billed for).
   */
  onSpoken?: (characters: number) => void;
}

export interface EspeakEngineOptions {
  /** Worker threads, each holding its own eSpeak instance; defaults to the available cores. */
  poolSize?: number;
  /** A sentence still synthesizing after this long has its worker replaced. */
  jobTimeoutMs?: number;
}

/**
 * Sentences dispatched ahead of the one being awaited, so the next chunk is usually ready by the
 * time the consumer asks for it, while one stream cannot flood the pool.
 */
const LOOKAHEAD = 2;
const DEFAULT_JOB_TIMEOUT_MS = 30_000;

/** eSpeak NG running in a pool of worker threads, streaming 16-bit mono PCM at 24 kHz. */
export class EspeakEngine {
  readonly #pool: WorkerPool<EspeakJob, EspeakJobResult>;
  readonly #voices: ReadonlyMap<string, EspeakVoice>;

  private constructor(
    pool: WorkerPool<EspeakJob, EspeakJobResult>,
    voices: ReadonlyMap<string, EspeakVoice>,
  ) {
    this.#pool = pool;
    this.#voices = voices;
  }

  static async start(options: EspeakEngineOptions = {}): Promise<EspeakEngine> {
    const pool = await WorkerPool.start<EspeakJob, EspeakJobResult>({
      url: new URL("./worker.js", import.meta.url),
      size: options.poolSize ?? availableParallelism(),
      jobTimeoutMs: options.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS,
      logger: componentLogger("espeak-engine"),
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

  /**
   * Streams the speech for `text` sentence by sentence, in order. Throws UnknownVoiceError or a
   * RangeError (bad speed) right away, before any work is queued.
   */
  synthesize(text: string, options: EspeakSynthesisOptions): AsyncIterable<Int16Array> {
    if (!this.#voices.has(options.voice)) {
      throw new UnknownVoiceError(options.voice);
    }
    const rate = wordsPerMinute(options.speed);
    const pieces = splitSentences(text);
    return this.#stream(
      options.shortLead === false ? pieces : withShortLead(pieces),
      options.voice,
      rate,
      options.signal,
      options.onSpoken,
    );
  }

  /** Throws unless at least one worker can synthesize (the speech service's health probe). */
  checkHealth(): void {
    if (this.#pool.readyWorkers === 0) throw new Error("no eSpeak worker is ready");
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  async *#stream(
    sentences: string[],
    voice: string,
    rate: number,
    signal: AbortSignal | undefined,
    onSpoken: ((characters: number) => void) | undefined,
  ): AsyncGenerator<Int16Array> {
    signal?.throwIfAborted();
    // Cancels this stream's outstanding jobs on abort, on error, and when the consumer stops early.
    const jobs = new AbortController();
    const forwardAbort = () => jobs.abort(signal?.reason);
    signal?.addEventListener("abort", forwardAbort, { once: true });

    const pending: Promise<EspeakJobResult>[] = [];
    let next = 0;
    let spoken = 0;
    const dispatch = () => {
      while (next < sentences.length && pending.length <= LOOKAHEAD) {
        const job = this.#pool.run(
          { type: "synthesize", text: sentences[next], voice, wordsPerMinute: rate },
          // A stream's first sentence, which a new listener is waiting on, goes before read-ahead.
          { signal: jobs.signal, priority: pending.length === 0 ? "high" : "low" },
        );
        // Awaited in order below; this only keeps a failure that comes after an earlier one quiet.
        job.catch(() => {});
        pending.push(job);
        next++;
      }
    };

    try {
      dispatch();
      for (let result = pending.shift(); result !== undefined; result = pending.shift()) {
        const samples = await result;
        dispatch();
        if (!(samples instanceof Int16Array)) {
          throw new Error("eSpeak worker answered a synthesis job with something other than audio");
        }
        if (samples.length > 0) {
          yield samples;
        }
        // The consumer came back for more: this sentence's audio has been delivered.
        onSpoken?.([...(sentences[spoken++] ?? "")].length);
        signal?.throwIfAborted();
      }
    } finally {
      signal?.removeEventListener("abort", forwardAbort);
      jobs.abort();
    }
  }
}
