export { chunkBytes, MAX_CHUNK_BYTES } from "./chunk-bytes.js";
export { closeSpareEncoders, encodeContainer } from "./container-encoder.js";
export { createAudioEncoder } from "./create-audio-encoder.js";
export {
  type AudioEncoder,
  type AudioFormat,
  type ContainerFormat,
  isContainerFormat,
  type ResponseFormat,
  SAMPLE_RATE,
  type SourceFormat,
  sourceFormat,
} from "./format.js";
export { Mp3Duration } from "./mp3-duration.js";
export { float32ToInt16, int16ToFloat32 } from "./sample-conversion.js";
export { WAV_HEADER_BYTES, wavStreamHeader } from "./wav-header.js";
