/** Kilobits per second by bitrate index: MPEG-1 layers I, II, III, then MPEG-2/2.5 layer I, II and III. */
const BITRATES = [
  [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
];
/** Sample rates by version bits (0 = MPEG-2.5, 2 = MPEG-2, 3 = MPEG-1). */
const SAMPLE_RATES: Record<number, number[]> = {
  0: [11025, 12000, 8000],
  2: [22050, 24000, 16000],
  3: [44100, 48000, 32000],
};

interface Frame {
  bytes: number;
  samples: number;
  sampleRate: number;
}

/** The frame whose 4-byte header starts at `at`, or undefined when these bytes are not one. */
function frameAt(b: Uint8Array, at: number): Frame | undefined {
  const b1 = b[at + 1] ?? 0;
  const b2 = b[at + 2] ?? 0;
  if (b[at] !== 0xff || (b1 & 0xe0) !== 0xe0) return undefined;
  const version = (b1 >> 3) & 3;
  const layer = 4 - ((b1 >> 1) & 3); // 1, 2 or 3; 4 is reserved
  const rates = SAMPLE_RATES[version];
  const sampleRate = rates?.[(b2 >> 2) & 3];
  const table = version === 3 ? layer - 1 : layer === 1 ? 3 : 4;
  const kbps = BITRATES[table]?.[b2 >> 4];
  if (layer > 3 || !sampleRate || !kbps) return undefined;
  const padding = (b2 >> 1) & 1;
  if (layer === 1) {
    return {
      bytes: (Math.floor((12_000 * kbps) / sampleRate) + padding) * 4,
      samples: 384,
      sampleRate,
    };
  }
  const samples = layer === 3 && version !== 3 ? 576 : 1152;
  const bytes = Math.floor(((samples / 8) * 1000 * kbps) / sampleRate) + padding;
  return { bytes, samples, sampleRate };
}

/** A Xing/Info (or VBRI) header frame describes the stream and holds no audio. */
function isInfoFrame(b: Uint8Array, at: number, length: number): boolean {
  const head = Buffer.from(b.subarray(at + 4, at + Math.min(length, 48))).toString("latin1");
  return /Xing|Info|VBRI/.test(head);
}

/**
 * Measures an MP3 stream as it passes, by its frame headers, without decoding
 * it: an upstream's MP3 is relayed as is, and this is how its generation
 * record still gets a duration.
 */
export class Mp3Duration {
  #pending: Uint8Array = new Uint8Array(0);
  #skip = 0;
  #frames = 0;
  #seconds = 0;

  get seconds(): number {
    return this.#seconds;
  }

  push(chunk: Uint8Array): void {
    const b = this.#pending.byteLength > 0 ? Buffer.concat([this.#pending, chunk]) : chunk;
    let at = Math.min(this.#skip, b.byteLength);
    this.#skip -= at;
    while (at + 10 <= b.byteLength) {
      if (this.#frames === 0 && b[at] === 0x49 && b[at + 1] === 0x44 && b[at + 2] === 0x33) {
        // An ID3v2 tag: its size is 4 syncsafe bytes, plus 10 for a footer when flagged.
        const size =
          ((b[at + 6] ?? 0) << 21) |
          ((b[at + 7] ?? 0) << 14) |
          ((b[at + 8] ?? 0) << 7) |
          (b[at + 9] ?? 0);
        const tag = 10 + size + ((b[at + 5] ?? 0) & 0x10 ? 10 : 0);
        const inChunk = Math.min(tag, b.byteLength - at);
        this.#skip = tag - inChunk;
        at += inChunk;
        continue;
      }
      const frame = frameAt(b, at);
      if (!frame) {
        at++; // not a frame header: resynchronise byte by byte
        continue;
      }
      if (at + frame.bytes > b.byteLength) break; // the rest of this frame is in the next chunk
      if (this.#frames > 0 || !isInfoFrame(b, at, frame.bytes)) {
        this.#seconds += frame.samples / frame.sampleRate;
      }
      this.#frames++;
      at += frame.bytes;
    }
    this.#pending = b.slice(at);
  }
}
