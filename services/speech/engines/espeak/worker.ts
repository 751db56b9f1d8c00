// Entry point of one eSpeak worker thread: loads the wasm once, then synthesizes, resamples and
// encodes piece by piece, sending the audio out in blocks as it is made.

import { createAudioEncoder } from "../../audio/create-audio-encoder.js";
import type { AudioEncoder, AudioFormat } from "../../audio/format.js";
import { SAMPLE_RATE } from "../../audio/format.js";
import { ESPEAK_SAMPLE_RATE, loadEspeak } from "./espeak-wasm.js";
import type { EncodedAudio, EspeakJob, EspeakJobResult } from "./jobs.js";
import { createResampler } from "./resampler.js";
import { type JobContext, type JobHandler, serveJobs } from "./serve-jobs.js";
import { DEFAULT_WORDS_PER_MINUTE } from "./speech-rate.js";

const WARM_UP_VOICE = "gmw/en-US";
/** Varied words, numbers and punctuation, so that most of eSpeak's code paths get exercised. */
const WARM_UP_TEXT =
  'Quick zephyrs blow, vexing daft Jim! On 3 May 2024, at 10:45, forty-two passengers queued; would anybody explain why? "Certainly," replied the conductor, (quietly) checking tickets & timetables.';
const WARM_UP_RUNS = 3;

/**
 * Audio leaves the worker in blocks of about this much speech (1 s): small enough that a long
 * sentence streams and is never held whole, large enough that messages stay few. A stream's very
 * first block leaves as soon as it is encoded (about 0.1 s of speech), for a fast first byte.
 */
const EMIT_SAMPLES = SAMPLE_RATE;

/** Collects a piece's encoded audio and sends it on in blocks; one per worker, reused by every job. */
class Outbox {
  /** Reused between blocks and jobs; only what is sent gets a buffer of its own (to transfer). */
  #staging = new Uint8Array(64 * 1024);
  #bytes = 0;
  #samples = 0;
  #eager = false;
  #context?: JobContext<EncodedAudio>;

  /** Starts a job's output; `eager`: send the first audio as soon as there is any. */
  begin(context: JobContext<EncodedAudio>, eager: boolean): void {
    this.#context = context;
    this.#eager = eager;
    this.#bytes = 0;
    this.#samples = 0;
  }

  add(bytes: Uint8Array, samples: number): void {
    if (this.#bytes + bytes.length > this.#staging.length) {
      const grown = new Uint8Array(Math.max(this.#bytes + bytes.length, this.#staging.length * 2));
      grown.set(this.#staging.subarray(0, this.#bytes));
      this.#staging = grown;
    }
    this.#staging.set(bytes, this.#bytes);
    this.#bytes += bytes.length;
    this.#samples += samples;
    if (this.#bytes > 0 && (this.#eager || this.#samples >= EMIT_SAMPLES)) {
      this.#eager = false;
      const audio = this.take();
      this.#context?.emit(audio, [audio.bytes.buffer as ArrayBuffer]);
    }
  }

  /** Everything not sent yet, in a buffer of its own that the caller may transfer. */
  take(): EncodedAudio {
    const audio = { bytes: this.#staging.slice(0, this.#bytes), samples: this.#samples };
    this.#bytes = 0;
    this.#samples = 0;
    return audio;
  }
}

await serveJobs<EspeakJob, EspeakJobResult, EncodedAudio>(async (log, data) => {
  const { espeakData } = (data ?? {}) as { espeakData?: SharedArrayBuffer };
  const [espeak, resampler] = await Promise.all([
    loadEspeak((line) => log("info", `espeak: ${line}`), espeakData),
    createResampler(ESPEAK_SAMPLE_RATE, SAMPLE_RATE),
  ]);
  const voices = espeak.voices();
  /** Encoders of the streams leased to this worker, kept from one piece to the next. */
  const streams = new Map<number, AudioEncoder>();
  const out = new Outbox();
  /**
   * One mp3 encoder made ahead, while the worker is idle: starting LAME took 2-13 ms (measured),
   * which a new stream's first byte would otherwise wait for.
   */
  let spare: Promise<AudioEncoder> | undefined;
  const makeSpare = () => {
    const made = createAudioEncoder("mp3");
    // A failure surfaces in the job that takes it; until then it must not count as unhandled.
    made.catch(() => {});
    return made;
  };
  const encoderFor = (format: AudioFormat): Promise<AudioEncoder> => {
    if (format !== "mp3" || spare === undefined) return createAudioEncoder(format);
    const ready = spare;
    spare = undefined;
    // Replaced once this job's answer is on its way.
    setImmediate(() => {
      spare ??= makeSpare();
    });
    return ready;
  };

  const handle: JobHandler<EspeakJob, EspeakJobResult, EncodedAudio> = async (job, context) => {
    if (job.type === "voices") {
      return { result: voices };
    }
    if (job.type === "end-stream") {
      streams.delete(job.stream);
      return { result: { bytes: new Uint8Array(0), samples: 0 } };
    }
    let encoder = job.stream === undefined ? undefined : streams.get(job.stream);
    if (encoder === undefined) {
      encoder = await encoderFor(job.format);
      if (job.stream !== undefined) streams.set(job.stream, encoder);
    }
    out.begin(context, job.first);
    const encode = (samples: Int16Array) => {
      if (samples.length > 0) out.add(encoder.encode(samples), samples.length);
    };
    try {
      espeak.synthesize(job.text, job.voice, job.wordsPerMinute, (block) => {
        encode(resampler.push(block));
        // Polled between blocks: a cancelled request frees this worker within ~0.1 s of speech.
        return context.cancelled();
      });
    } finally {
      // Always, so a failed or cancelled piece leaves the resampler clean for the next one.
      encode(resampler.end());
    }
    if (job.last || job.stream === undefined) {
      out.add(encoder.flush(), 0);
      if (job.stream !== undefined) streams.delete(job.stream);
    }
    const rest = out.take();
    return { result: rest, transfer: [rest.bytes.buffer as ArrayBuffer] };
  };

  // Wasm starts in V8's baseline tier and only hot functions get optimized, after a few runs. Doing
  // those runs here (eSpeak, the resampler and both encoders), before reporting ready, cuts a fresh
  // worker's first audio from hundreds of milliseconds (about a second for the very first) to a few.
  const warmUpVoice = voices.some((voice) => voice.id === WARM_UP_VOICE)
    ? WARM_UP_VOICE
    : voices[0]?.id;
  const quiet: JobContext<EncodedAudio> = { emit: () => {}, cancelled: () => false };
  for (let run = 0; warmUpVoice !== undefined && run < WARM_UP_RUNS; run++) {
    for (const format of ["pcm", "mp3"] as const) {
      await handle(
        {
          type: "synthesize",
          text: WARM_UP_TEXT,
          voice: warmUpVoice,
          wordsPerMinute: DEFAULT_WORDS_PER_MINUTE,
          format,
          first: true,
          last: true,
        },
        quiet,
      );
    }
  }
  spare = makeSpare();
  return handle;
});
