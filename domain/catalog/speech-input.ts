/**
 * What a speech request asks to be spoken, as the engines and the content filters both read it:
 * below governance, so the rules that filter it need nothing from the speech service.
 */

/** One stretch of speech in one voice: the whole input, or one speaker turn. */
export interface SynthesisSegment {
  text: string;
  voice: string;
  instructions?: string;
}

export interface ReferenceInput {
  kind: "audio" | "text" | "image";
  /** A data URL (audio, image) or https URL (image), or the transcript text. */
  value: string;
}
