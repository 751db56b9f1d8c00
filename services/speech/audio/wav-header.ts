import { SAMPLE_RATE } from "./format.js";

/** Bytes of the canonical RIFF/WAVE header: RIFF, fmt (16 bytes of PCM format), data. */
export const WAV_HEADER_BYTES = 44;

/**
 * "Length unknown": a streamed WAV's header leaves before its length is known, so both size
 * fields carry the largest value, as OpenAI's streamed WAV does. Players read to the end of
 * the stream; strict readers that want real sizes can rewrite them once the file is complete.
 */
const UNKNOWN_SIZE = 0xffffffff;

/** The header for a stream of 16-bit little-endian mono PCM at SAMPLE_RATE. */
export function wavStreamHeader(): Uint8Array {
  const out = new Uint8Array(WAV_HEADER_BYTES);
  const view = new DataView(out.buffer);
  const ascii = (at: number, text: string) => {
    for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
  };
  const channels = 1;
  const bytesPerSample = 2;
  ascii(0, "RIFF");
  view.setUint32(4, UNKNOWN_SIZE, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, channels, true);
  view.setUint32(24, SAMPLE_RATE, true);
  view.setUint32(28, SAMPLE_RATE * channels * bytesPerSample, true);
  view.setUint16(32, channels * bytesPerSample, true);
  view.setUint16(34, bytesPerSample * 8, true);
  ascii(36, "data");
  view.setUint32(40, UNKNOWN_SIZE, true);
  return out;
}
