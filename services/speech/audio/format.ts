/** What encoders (and engines, and upstreams asked by the service) produce. */
export type AudioFormat = "pcm" | "mp3";

/**
 * What a client may ask for. WAV is PCM behind a header: the service asks engines and
 * upstreams for PCM and writes the header itself, so every endpoint serves it the same way.
 */
export type ResponseFormat = AudioFormat | "wav";

/** The format to ask an engine or upstream for, to answer in `format`. */
export function sourceFormat(format: ResponseFormat): AudioFormat {
  return format === "wav" ? "pcm" : format;
}

/** Every engine hands the encoders 16-bit mono PCM at this rate. */
export const SAMPLE_RATE = 24000;

export interface AudioEncoder {
  readonly contentType: string;
  /** Encodes the next chunk of the stream; the bytes returned are owned by the caller. */
  encode(samples: Int16Array): Uint8Array;
  /** Ends the stream, returning whatever the encoder still holds back. */
  flush(): Uint8Array;
}
