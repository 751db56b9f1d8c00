import { isContainerFormat, SAMPLE_RATE } from "../../audio/index.js";
import type { AdapterOutput, AdapterRequest, SpeechAdapter } from "../types.js";
import type { EspeakEngine } from "./engine.js";
import { type PublicVoice, publicVoices } from "./public-voices.js";

/**
 * The embedded engine behind the adapter interface: turns are spoken one after another, as one
 * stream encoded in the engine's workers (so the main thread only relays bytes). Opus, AAC and
 * FLAC are the exception: their encoders are asynchronous (two run in worker threads of their
 * own), so the engine hands over PCM and the service encodes it as it streams.
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
    const container = isContainerFormat(request.format);
    const audio = this.engine.speak(segments, {
      speed: request.speed,
      format: container || request.format === "pcm" ? "pcm" : "mp3",
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
    if (container) return { kind: "pcm", samples: pcmSamples(bytes()) };
    return { kind: "encoded", bytes: bytes(), seconds: () => samples / SAMPLE_RATE };
  }
}

/** The engine's PCM bytes (16-bit little-endian, whole samples per piece) as samples. */
async function* pcmSamples(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<Int16Array> {
  for await (const piece of bytes) {
    // Read through a DataView: a piece may start at an odd offset, and the host may be big-endian.
    const view = new DataView(piece.buffer, piece.byteOffset, piece.byteLength);
    const samples = new Int16Array(piece.byteLength >> 1);
    for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(i * 2, true);
    yield samples;
  }
}
