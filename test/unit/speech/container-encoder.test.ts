import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { encoderStarts } from "../../../domain/metrics.js";
import { closeSpareEncoders, encodeContainer } from "../../../services/speech/audio/index.js";
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

/** How many streams of `format` started on an encoder primed ahead of them (or not). */
async function starts(format: "aac" | "flac", primed: boolean): Promise<number> {
  const { values } = await encoderStarts.get();
  const wanted = String(primed);
  return values.find((v) => v.labels.format === format && v.labels.primed === wanted)?.value ?? 0;
}

async function encodeAll(format: "aac" | "flac"): Promise<Buffer> {
  const out: Uint8Array[] = [];
  for await (const bytes of encodeContainer(format, pieces(8).source)) out.push(bytes);
  return Buffer.concat(out);
}

describe("unit: aac and flac encoders started ahead of their stream (their first byte comes sooner)", () => {
  for (const format of ["aac", "flac"] as const) {
    it(`${format}: a stream takes the encoder primed after the one before it, and decodes as whole as a fresh one`, async function () {
      this.timeout(120_000);
      await closeSpareEncoders();
      const freshBefore = await starts(format, false);
      // Nothing is primed after close: this stream starts its own encoder, and primes the next.
      const fresh = await decodeWithFfmpeg(await encodeAll(format), format);
      expect(await starts(format, false)).to.equal(freshBefore + 1);
      const primedBefore = await starts(format, true);
      let primed: Buffer | undefined;
      // The next encoder starts in the background (tens of ms); a stream that comes sooner
      // starts its own. No time is asserted: the loop waits until one stream got a primed one.
      for (let i = 0; i < 50 && primed === undefined; i++) {
        await sleep(100);
        const bytes = await encodeAll(format);
        if ((await starts(format, true)) > primedBefore) primed = bytes;
      }
      expect(primed, "a stream that started on a primed encoder").to.not.equal(undefined);
      const decoded = await decodeWithFfmpeg(primed as Buffer, format);
      // The sample of silence that primed it is 1/24,000 s: the same codec, rate and length.
      expect(decoded.codec).to.equal(FFMPEG_NAMES[format].codec);
      expect(decoded.container).to.equal(FFMPEG_NAMES[format].container);
      expect(decoded.sampleRate).to.equal(24000);
      expect(decoded.channels).to.equal(1);
      expect(decoded.seconds).to.be.closeTo(fresh.seconds, 0.05);
      // The server's close frees the primed encoder: the next stream starts its own again.
      await closeSpareEncoders();
      const freshAfter = await starts(format, false);
      await encodeAll(format);
      expect(await starts(format, false)).to.equal(freshAfter + 1);
      await closeSpareEncoders();
    });
  }
});
