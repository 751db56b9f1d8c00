import type { AdapterOutput, AdapterRequest, SpeechAdapter } from "../types.js";
import type { EspeakEngine } from "./engine.js";
import { type PublicVoice, publicVoices } from "./public-voices.js";

/** The embedded engine behind the adapter interface: turns are spoken one after another. */
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
    const engine = this.engine;
    async function* samples(): AsyncGenerator<Int16Array> {
      for (const segment of segments) {
        yield* engine.synthesize(segment.text, {
          voice: segment.voice,
          speed: request.speed,
          signal: request.signal,
          onSpoken: request.onSpoken,
        });
      }
    }
    return { kind: "pcm", samples: samples() };
  }
}
