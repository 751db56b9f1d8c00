import { expect } from "chai";
import { MPEGDecoder } from "mpg123-decoder";
import {
  type AudioEncoder,
  type AudioFormat,
  createAudioEncoder,
  SAMPLE_RATE,
} from "../../../services/speech/audio/index.js";

/** A warbling tone: audible, and different in every frame. */
function tone(seconds: number): Int16Array {
  const out = new Int16Array(Math.round(seconds * SAMPLE_RATE));
  for (let i = 0; i < out.length; i++) {
    const t = i / SAMPLE_RATE;
    out[i] = Math.round(
      12000 * Math.sin(2 * Math.PI * (300 + 80 * Math.sin(2 * Math.PI * 3 * t)) * t),
    );
  }
  return out;
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function encodeInChunks(encoder: AudioEncoder, samples: Int16Array, sizes: number[]): Uint8Array {
  const parts: Uint8Array[] = [];
  let offset = 0;
  for (let index = 0; offset < samples.length; index++) {
    const size = sizes[index % sizes.length];
    parts.push(encoder.encode(samples.subarray(offset, offset + size)));
    offset += size;
  }
  parts.push(encoder.flush());
  return concatBytes(parts);
}

async function decodeMp3(bytes: Uint8Array) {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    return decoder.decode(bytes);
  } finally {
    decoder.free();
  }
}

function rms(samples: Float32Array): number {
  return Math.sqrt(samples.reduce((total, sample) => total + sample * sample, 0) / samples.length);
}

describe("audio encoders", () => {
  describe("pcm", () => {
    it("writes 16-bit little-endian mono at 24 kHz", async () => {
      const encoder = await createAudioEncoder("pcm");
      expect(encoder.contentType).to.equal("audio/pcm;rate=24000;channels=1");
      // A view into a larger buffer, to check that the offset is honoured.
      const backing = new Int16Array([99, 1, -2, 0x1234, -32768, 32767, 99]);
      const bytes = encoder.encode(backing.subarray(1, 6));
      expect([...bytes]).to.deep.equal([1, 0, 0xfe, 0xff, 0x34, 0x12, 0x00, 0x80, 0xff, 0x7f]);
      expect(encoder.flush()).to.have.length(0);
    });

    it("returns two bytes per sample that decode back to the input", async () => {
      const encoder = await createAudioEncoder("pcm");
      const samples = tone(0.5);
      const bytes = encoder.encode(samples);
      expect(bytes.length).to.equal(samples.length * 2);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let i = 0; i < samples.length; i += 97) {
        expect(view.getInt16(i * 2, true)).to.equal(samples[i]);
      }
    });

    it("returns bytes that do not alias the input", async () => {
      const encoder = await createAudioEncoder("pcm");
      const samples = new Int16Array([1, 2, 3]);
      const bytes = encoder.encode(samples);
      samples[0] = 500;
      expect(bytes[0]).to.equal(1);
    });
  });

  describe("mp3", () => {
    it("encodes audio that decodes to the same duration at 24 kHz", async () => {
      const encoder = await createAudioEncoder("mp3");
      expect(encoder.contentType).to.equal("audio/mpeg");
      const samples = tone(3);
      const decoded = await decodeMp3(concatBytes([encoder.encode(samples), encoder.flush()]));
      expect(decoded.errors).to.deep.equal([]);
      expect(decoded.sampleRate).to.equal(SAMPLE_RATE);
      expect(decoded.samplesDecoded).to.be.within(samples.length * 0.95, samples.length * 1.1);
      expect(rms(decoded.channelData[0])).to.be.greaterThan(0.1);
    });

    it("produces the same stream whether fed in one chunk or many small ones", async () => {
      const samples = tone(2);
      const whole = await createAudioEncoder("mp3");
      const wholeBytes = encodeInChunks(whole, samples, [samples.length]);
      const chunked = await createAudioEncoder("mp3");
      const chunkedBytes = encodeInChunks(chunked, samples, [1, 999, 4801, 37, 2400]);
      const [wholeAudio, chunkedAudio] = await Promise.all([
        decodeMp3(wholeBytes),
        decodeMp3(chunkedBytes),
      ]);
      expect(chunkedAudio.samplesDecoded).to.equal(wholeAudio.samplesDecoded);
      expect(chunkedBytes).to.deep.equal(wholeBytes);
    });

    it("hands out copies, not the encoder's reused buffer", async () => {
      const encoder = await createAudioEncoder("mp3");
      const samples = tone(1);
      const first = encoder.encode(samples.subarray(0, 12000));
      const snapshot = first.slice();
      expect(first.length).to.be.greaterThan(0);
      encoder.encode(samples.subarray(12000));
      encoder.flush();
      expect(first).to.deep.equal(snapshot);
    });

    it("refuses more audio after flush", async () => {
      const encoder = await createAudioEncoder("mp3");
      encoder.flush();
      expect(() => encoder.encode(new Int16Array(10))).to.throw("already flushed");
      expect(encoder.flush()).to.have.length(0);
    });

    it("keeps interleaved streams independent", async () => {
      const [a, b, reference] = await Promise.all([
        createAudioEncoder("mp3"),
        createAudioEncoder("mp3"),
        createAudioEncoder("mp3"),
      ]);
      const samples = tone(1);
      const other = tone(1).map((sample) => sample >> 2);
      const aParts: Uint8Array[] = [];
      for (let offset = 0; offset < samples.length; offset += 4800) {
        aParts.push(a.encode(samples.subarray(offset, offset + 4800)));
        b.encode(other.subarray(offset, offset + 4800));
      }
      aParts.push(a.flush());
      b.flush();
      expect(concatBytes(aParts)).to.deep.equal(encodeInChunks(reference, samples, [4800]));
    });
  });

  it("rejects an unknown format", async () => {
    let error: unknown;
    try {
      await createAudioEncoder("ogg" as AudioFormat);
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(RangeError);
  });
});
