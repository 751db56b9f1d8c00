import { AudioFormat } from "../gen/railgate/speech/v1/speech_pb.js";

/**
 * The one table of speech response formats: the name a client sends (OpenAI's six), the proto
 * enum the services carry, and the content type the response is served with. The gateway's
 * JSON, request planning, the speech service and the request log all read it from here.
 */

/** A response_format as clients write it. */
export type AudioFormatName = "mp3" | "opus" | "aac" | "flac" | "wav" | "pcm";

/** Every engine and upstream speaks 16-bit mono PCM at this rate (OpenAI's `pcm` is 24 kHz). */
export const SAMPLE_RATE = 24000;

interface FormatEntry {
  name: AudioFormatName;
  value: AudioFormat;
  contentType: string;
}

/** In OpenAI's order, which is also the order messages list them in. */
const TABLE: readonly FormatEntry[] = [
  { name: "mp3", value: AudioFormat.MP3, contentType: "audio/mpeg" },
  // Ogg Opus; OpenAI serves it as audio/opus.
  { name: "opus", value: AudioFormat.OPUS, contentType: "audio/opus" },
  // ADTS frames, playable as a stream.
  { name: "aac", value: AudioFormat.AAC, contentType: "audio/aac" },
  { name: "flac", value: AudioFormat.FLAC, contentType: "audio/flac" },
  // The rate and channels are in the RIFF header.
  { name: "wav", value: AudioFormat.WAV, contentType: "audio/wav" },
  // Headerless, so the type carries what a player needs to know.
  { name: "pcm", value: AudioFormat.PCM, contentType: `audio/pcm;rate=${SAMPLE_RATE};channels=1` },
];

export const AUDIO_FORMAT_NAMES: readonly AudioFormatName[] = TABLE.map((f) => f.name);

const BY_NAME = new Map<string, FormatEntry>(TABLE.map((f) => [f.name, f]));
const BY_VALUE = new Map<AudioFormat, FormatEntry>(TABLE.map((f) => [f.value, f]));

export function isAudioFormatName(name: unknown): name is AudioFormatName {
  return typeof name === "string" && BY_NAME.has(name);
}

/** The enum value for a name, or undefined when the name is not a format. */
export function audioFormatValue(name: string): AudioFormat | undefined {
  return BY_NAME.get(name)?.value;
}

/** The name of an enum value, or undefined for UNSPECIFIED and values this build does not know. */
export function audioFormatName(value: AudioFormat): AudioFormatName | undefined {
  return BY_VALUE.get(value)?.name;
}

export function audioContentType(name: AudioFormatName): string {
  const entry = BY_NAME.get(name);
  if (!entry) throw new RangeError(`unknown audio format ${name}`);
  return entry.contentType;
}

/** `"mp3", "opus" or "pcm"`: formats as an error message lists them, in the table's order. */
export function formatList(names: readonly AudioFormatName[] = AUDIO_FORMAT_NAMES): string {
  const sorted = AUDIO_FORMAT_NAMES.filter((n) => names.includes(n)).map((n) => `"${n}"`);
  if (sorted.length <= 1) return sorted.join("");
  return `${sorted.slice(0, -1).join(", ")} or ${sorted[sorted.length - 1]}`;
}
