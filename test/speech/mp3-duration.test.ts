import { expect } from "chai";
import { createAudioEncoder, Mp3Duration } from "../../services/speech/audio/index.js";
import { decodeMp3, sineTone } from "../kit/audio.js";

/** One MPEG-2 layer III frame at 24 kHz. */
const FRAME_SECONDS = 576 / 24000;

async function mp3Of(seconds: number): Promise<Buffer> {
  const encoder = await createAudioEncoder("mp3");
  return Buffer.concat([encoder.encode(sineTone(seconds)), encoder.flush()]);
}

/** Feeds `bytes` in pieces of the given sizes, round and round. */
function measure(bytes: Uint8Array, sizes: number[]): number {
  const d = new Mp3Duration();
  for (let at = 0, i = 0; at < bytes.byteLength; i++) {
    const n = sizes[i % sizes.length] ?? 1;
    d.push(bytes.subarray(at, at + n));
    at += n;
  }
  return d.seconds;
}

function id3Tag(bodyBytes: number): Buffer {
  const tag = Buffer.alloc(10 + bodyBytes, 0x41);
  tag.write("ID3", 0, "latin1");
  tag[3] = 4;
  tag[4] = 0;
  tag[5] = 0;
  // Syncsafe size: 7 bits per byte.
  tag[6] = (bodyBytes >> 21) & 0x7f;
  tag[7] = (bodyBytes >> 14) & 0x7f;
  tag[8] = (bodyBytes >> 7) & 0x7f;
  tag[9] = bodyBytes & 0x7f;
  return tag;
}

describe("speech: MP3 duration of a relayed stream", () => {
  it("measures what a decoder decodes, however the stream is cut", async () => {
    const mp3 = await mp3Of(2);
    const decoded = await decodeMp3(mp3);
    for (const sizes of [[mp3.byteLength], [1], [7, 333, 2], [4096]]) {
      expect(measure(mp3, sizes), `pieces of ${sizes}`).to.be.closeTo(
        decoded.seconds,
        2 * FRAME_SECONDS,
      );
    }
    expect(measure(mp3, [100])).to.be.closeTo(2, 0.1);
  });

  it("skips an ID3 tag, even one split across pieces", async () => {
    const mp3 = await mp3Of(1);
    const tagged = Buffer.concat([id3Tag(5000), mp3]);
    expect(measure(tagged, [333])).to.be.closeTo(measure(mp3, [333]), 1e-9);
    expect(measure(tagged, [3])).to.be.closeTo(measure(mp3, [3]), 1e-9);
  });

  it("finds no audio in bytes that are not MP3", () => {
    const noise = Buffer.from(Array.from({ length: 20_000 }, (_, i) => (i * 7919) % 251));
    expect(measure(noise, [1000])).to.equal(0);
  });
});
