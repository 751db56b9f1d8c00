import type {
  SynthesisStart,
  SynthesizeResponse,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";

/**
 * The Synthesize stream's messages as plain literals. Both types are proto3 messages without
 * field defaults to fill in (one oneof, or scalars all given here), so a literal with its
 * `$typeName` is exactly what `create()` returns (test/unit/speech/messages.test.ts holds them
 * equal), without its per-call field walk: an audio stream yields one per chunk.
 */
export function audioMessage(audio: Uint8Array): SynthesizeResponse {
  return {
    $typeName: "railgate.speech.v1.SynthesizeResponse",
    event: { case: "audio", value: audio },
  };
}

/** The first message of a stream: what the gateway needs for the response head. */
export function startMessage(start: Omit<SynthesisStart, "$typeName">): SynthesizeResponse {
  return {
    $typeName: "railgate.speech.v1.SynthesizeResponse",
    event: {
      case: "start",
      value: {
        $typeName: "railgate.speech.v1.SynthesisStart",
        format: start.format,
        contentType: start.contentType,
        sampleRate: start.sampleRate,
        channels: start.channels,
        generationId: start.generationId,
        model: start.model,
        provider: start.provider,
      },
    },
  };
}
