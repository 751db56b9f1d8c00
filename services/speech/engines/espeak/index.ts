export {
  EspeakEngine,
  type EspeakEngineOptions,
  type EspeakSynthesisOptions,
} from "./engine.js";
export {
  JobTimeoutError,
  UnknownVoiceError,
  WorkerCrashedError,
  WorkerJobError,
} from "./errors.js";
export type { EspeakVoice } from "./espeak-wasm.js";
export { splitSentences, withShortLead } from "./sentences.js";
export { wordsPerMinute } from "./speech-rate.js";
