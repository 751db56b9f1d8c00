export { chunkBytes, MAX_CHUNK_BYTES } from "./chunk-bytes.js";
export { createAudioEncoder } from "./create-audio-encoder.js";
export { type AudioEncoder, type AudioFormat, SAMPLE_RATE } from "./format.js";
export { Mp3Duration } from "./mp3-duration.js";
export { float32ToInt16, int16ToFloat32 } from "./sample-conversion.js";
