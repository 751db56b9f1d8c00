import { SAMPLE_RATE } from "../../audio/index.js";
import type { AdapterOutput, AdapterRequest, SpeechAdapter } from "../types.js";
import type { EspeakEngine } from "./engine.js";
import { type PublicVoice, publicVoices } from "./public-voices.js";

/**
 * The embedded engine behind the adapter interface: turns are spoken one after another, as one
 * stream encoded in the engine's workers (so the main thread only relays bytes).
 */
export class EspeakAdapter implements SpeechAdapter {
  readonly voices: PublicVoice[];
  private readonly engineIds: Map<string, string>;

  constructor(private readonly engine: EspeakEngine) {
    this.voices = publicVoices(engine.voices());
    this.engineIds = new Map(this.voices.map((v) => [v.id, v.engineId]));
  }

  async start(request: AdapterRequest): Promise<AdapterOutput> {
    // Resolved up front so an unknown voice fails before the first byte.
    const segments = request.segments.map((s) => {
      const voice = this.engineIds.get(s.voice);
      if (!voice) throw new Error(`unknown voice ${s.voice}`);
      return { text: s.text, voice };
    });
    const audio = this.engine.speak(segments, {
      speed: request.speed,
      format: request.format,
      signal: request.signal,
      onSpoken: request.onSpoken,
    });
    // This engine reports what it delivered piece by piece: say so now, so a stream cut
    // before its first piece is whole is billed for the pieces it finished (none), not for
    // the whole input as an adapter that cannot tell would be.
    request.onSpoken?.(0);
    let samples = 0;
    async function* bytes(): AsyncGenerator<Uint8Array> {
      for await (const chunk of audio) {
        samples += chunk.samples;
        yield chunk.bytes;
      }
    }
    return { kind: "encoded", bytes: bytes(), seconds: () => samples / SAMPLE_RATE };
  }
}
