import { type AudioFormatName, SAMPLE_RATE } from "../../../domain/audio-formats.js";

/** What the in-thread encoders (and so the engine's workers) produce. */
export type AudioFormat = "pcm" | "mp3";

/** What a client may ask for: OpenAI's six formats. */
export type ResponseFormat = AudioFormatName;

/**
 * What an adapter is asked for. WAV is PCM behind a header: the service asks engines and
 * upstreams for PCM and writes the header itself, so every endpoint serves it the same way.
 */
export type SourceFormat = Exclude<ResponseFormat, "wav">;

/**
 * Formats carried in a container (Ogg, ADTS, FLAC) whose encoders run off the engine's
 * workers: the engine hands over PCM and the service encodes it as it streams.
 */
export type ContainerFormat = "opus" | "aac" | "flac";

export function isContainerFormat(format: ResponseFormat): format is ContainerFormat {
  return format === "opus" || format === "aac" || format === "flac";
}

/** The format to ask an engine or upstream for, to answer in `format`. */
export function sourceFormat(format: ResponseFormat): SourceFormat {
  return format === "wav" ? "pcm" : format;
}

/** Every engine hands the encoders 16-bit mono PCM at this rate. */
export { SAMPLE_RATE };

export interface AudioEncoder {
  readonly contentType: string;
  /** Encodes the next chunk of the stream; the bytes returned are owned by the caller. */
  encode(samples: Int16Array): Uint8Array;
  /** Ends the stream, returning whatever the encoder still holds back. */
  flush(): Uint8Array;
}
