/** Documented limits of the speech endpoint (README "Limits"). */
export const SPEECH_LIMITS = {
  /** Characters of text to synthesize, across input and turns; 413 beyond. */
  maxInputChars: 10_000,
  maxTurns: 64,
  maxInstructionsChars: 4_000,
  maxVoiceChars: 128,
  maxSessionIdChars: 256,
  maxUserChars: 256,
  maxReferenceClips: 3,
  /** Decoded bytes of all reference parts together. */
  maxReferenceBytes: 12 * 1024 * 1024,
  minSpeed: 0.25,
  maxSpeed: 4,
  /**
   * `trace` is stored with each generation record (30 days): bounded in size,
   * depth (deep values also break protobuf decoding) and number of items.
   */
  trace: { maxBytes: 16 * 1024, maxDepth: 8, maxItems: 1_000 },
  /** `provider.options`, all providers' options of one request together. */
  providerOptions: { maxBytes: 16 * 1024, maxDepth: 8, maxItems: 1_000 },
  /** Generation records are kept this long. */
  generationTtlSeconds: 30 * 24 * 3600,
} as const;
