// Entry point of one eSpeak worker thread: loads the wasm once, then synthesizes sentence by sentence.
import { SAMPLE_RATE } from "../../audio/format.js";
import { ESPEAK_SAMPLE_RATE, loadEspeak } from "./espeak-wasm.js";
import type { EspeakJob, EspeakJobResult } from "./jobs.js";
import { createResampler } from "./resampler.js";
import { serveJobs } from "./serve-jobs.js";
import { DEFAULT_WORDS_PER_MINUTE } from "./speech-rate.js";

const WARM_UP_VOICE = "gmw/en-US";
/** Varied words, numbers and punctuation, so that most of eSpeak's code paths get exercised. */
const WARM_UP_TEXT =
  'Quick zephyrs blow, vexing daft Jim! On 3 May 2024, at 10:45, forty-two passengers queued; would anybody explain why? "Certainly," replied the conductor, (quietly) checking tickets & timetables.';
const WARM_UP_RUNS = 3;

await serveJobs<EspeakJob, EspeakJobResult>(async (log) => {
  const [espeak, resample] = await Promise.all([
    loadEspeak((line) => log("info", `espeak: ${line}`)),
    createResampler(ESPEAK_SAMPLE_RATE, SAMPLE_RATE),
  ]);

  // Wasm starts in V8's baseline tier and only hot functions get optimized, after a few runs. Doing
  // those runs here, before reporting ready, cuts a fresh worker's first sentence from hundreds of
  // milliseconds (about a second for the very first) to tens.
  const voices = espeak.voices();
  const warmUpVoice = voices.some((voice) => voice.id === WARM_UP_VOICE)
    ? WARM_UP_VOICE
    : voices[0]?.id;
  for (let run = 0; warmUpVoice !== undefined && run < WARM_UP_RUNS; run++) {
    resample(espeak.synthesize(WARM_UP_TEXT, warmUpVoice, DEFAULT_WORDS_PER_MINUTE));
  }

  return (job) => {
    if (job.type === "voices") {
      return { result: voices };
    }
    const samples = resample(espeak.synthesize(job.text, job.voice, job.wordsPerMinute));
    return { result: samples, transfer: [samples.buffer as ArrayBuffer] };
  };
});
