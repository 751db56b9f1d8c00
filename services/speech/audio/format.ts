export type AudioFormat = "pcm" | "mp3";

/** Every engine hands the encoders 16-bit mono PCM at this rate. */
export const SAMPLE_RATE = 24000;

export interface AudioEncoder {
  readonly contentType: string;
  /** Encodes the next chunk of the stream; the bytes returned are owned by the caller. */
  encode(samples: Int16Array): Uint8Array;
  /** Ends the stream, returning whatever the encoder still holds back. */
  flush(): Uint8Array;
}
