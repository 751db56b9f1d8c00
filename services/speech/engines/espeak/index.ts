export {
  defaultPoolSize,
  EspeakEngine,
  type EspeakEngineOptions,
  type EspeakSegment,
  type EspeakSpeakOptions,
  type EspeakSynthesisOptions,
} from "./engine.js";
export {
  JobTimeoutError,
  UnknownVoiceError,
  WorkerCrashedError,
  WorkerJobError,
} from "./errors.js";
export type { EspeakVoice } from "./espeak-wasm.js";
export type { EncodedAudio } from "./jobs.js";
export { splitSentences, withShortLead } from "./sentences.js";
export { wordsPerMinute } from "./speech-rate.js";
