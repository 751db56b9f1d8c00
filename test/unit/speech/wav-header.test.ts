import { expect } from "chai";
import { WAV_HEADER_BYTES, wavStreamHeader } from "../../../services/speech/audio/index.js";
import { audioBytes } from "../../../services/speech/audio-stream.js";

async function* samples(...chunks: number[][]): AsyncGenerator<Int16Array> {
  for (const c of chunks) yield Int16Array.from(c);
}

async function collect(it: AsyncIterable<Uint8Array>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const piece of it) out.push(Buffer.from(piece));
  return out;
}

describe("speech audio: wav", () => {
  it("writes OpenAI's streamed WAV header: PCM mono 24 kHz 16-bit, sizes 0xFFFFFFFF", () => {
    const h = Buffer.from(wavStreamHeader());
    expect(h.byteLength).to.equal(WAV_HEADER_BYTES);
    expect(h.toString("hex")).to.equal(
      "52494646ffffffff57415645666d74201000000001000100c05d000080bb000002001000" +
        "64617461ffffffff",
    );
  });

  it("puts the header in front of the first audio, once, and counts it", async () => {
    const tally = { bytes: 0, seconds: 0 };
    const pieces = await collect(
      audioBytes({ kind: "pcm", samples: samples([1, -1], [2]) }, "wav", tally),
    );
    const all = Buffer.concat(pieces);
    expect(all.subarray(0, 44).equals(Buffer.from(wavStreamHeader()))).to.equal(true);
    expect([
      ...new Int16Array(all.buffer.slice(all.byteOffset + 44, all.byteOffset + all.byteLength)),
    ]).to.deep.equal([1, -1, 2]);
    expect(pieces[0]?.byteLength).to.equal(44 + 4);
    expect(tally.bytes).to.equal(all.byteLength);
    expect(tally.seconds).to.equal(3 / 24000);
  });

  it("is a header alone for a stream with no audio", async () => {
    const tally = { bytes: 0, seconds: 0 };
    const pieces = await collect(audioBytes({ kind: "pcm", samples: samples() }, "wav", tally));
    expect(Buffer.concat(pieces).byteLength).to.equal(44);
    expect(tally.bytes).to.equal(44);
  });
});
