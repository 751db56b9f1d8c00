import { expect } from "chai";
import { encodeContainer } from "../../../services/speech/audio/index.js";
import { sineTone } from "../../kit/audio.js";
import { decodeWithFfmpeg, FFMPEG_NAMES } from "../../kit/ffmpeg.js";

/** `pieces` quarter-second pieces of tone, counting how many were taken. */
function pieces(count: number): { source: AsyncGenerator<Int16Array>; taken: () => number } {
  let taken = 0;
  async function* source() {
    for (let i = 0; i < count; i++) {
      taken++;
      yield sineTone(0.25, 300 + 20 * i);
    }
  }
  return { source: source(), taken: () => taken };
}

describe("unit: container encoders (opus in Ogg, aac in ADTS, flac)", () => {
  for (const format of ["opus", "aac", "flac"] as const) {
    describe(format, () => {
      it("makes a stream ffmpeg decodes whole: codec, container, 24 kHz mono, its length", async () => {
        const { source } = pieces(8);
        const out: Uint8Array[] = [];
        for await (const bytes of encodeContainer(format, source)) out.push(bytes);
        const decoded = await decodeWithFfmpeg(Buffer.concat(out), format);
        expect(decoded.codec).to.equal(FFMPEG_NAMES[format].codec);
        expect(decoded.container).to.equal(FFMPEG_NAMES[format].container);
        expect(decoded.channels).to.equal(1);
        // Opus always decodes at 48 kHz; its header keeps the input's 24 kHz for information.
        expect(decoded.sampleRate).to.equal(format === "opus" ? 48000 : 24000);
        // Two seconds in; codecs pad to whole frames and AAC adds its priming samples.
        expect(decoded.seconds).to.be.within(1.95, 2.15);
      });

      it("streams: bytes leave before the last of the audio is taken", async () => {
        const { source, taken } = pieces(40);
        let takenAtFirstAudio: number | undefined;
        let total = 0;
        for await (const bytes of encodeContainer(format, source)) {
          total += bytes.byteLength;
          // The container's own header may come first; audio frames follow it.
          if (takenAtFirstAudio === undefined && total > 200) takenAtFirstAudio = taken();
        }
        expect(takenAtFirstAudio).to.be.below(40);
      });

      it("stops cleanly when the listener leaves mid-stream, and stops taking audio", async () => {
        const { source, taken } = pieces(200);
        let received = 0;
        for await (const bytes of encodeContainer(format, source)) {
          received += bytes.byteLength;
          if (received > 2000) break;
        }
        expect(taken()).to.be.below(200);
      });

      it("answers no audio at all with no bytes (the muxers cannot write a file without one packet)", async () => {
        const { source } = pieces(0);
        const out: Uint8Array[] = [];
        for await (const bytes of encodeContainer(format, source)) out.push(bytes);
        expect(Buffer.concat(out).byteLength).to.equal(0);
      });
    });
  }
});
