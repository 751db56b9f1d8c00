import { expect } from "chai";
import { chunkBytes } from "../../../services/speech/audio/index.js";

function randomBytes(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    bytes[i] = (i * 7919 + (i >> 3)) & 0xff;
  }
  return bytes;
}

describe("chunkBytes", () => {
  it("returns no pieces for no bytes", () => {
    expect(chunkBytes(new Uint8Array(0))).to.deep.equal([]);
  });

  it("keeps exactly 64 KiB in one piece and splits one byte more", () => {
    expect(chunkBytes(new Uint8Array(65536)).map((piece) => piece.length)).to.deep.equal([65536]);
    expect(chunkBytes(new Uint8Array(65537)).map((piece) => piece.length)).to.deep.equal([
      65536, 1,
    ]);
  });

  it("never exceeds the limit and concatenates back to the input", () => {
    for (const [length, max] of [
      [200_000, 65536],
      [1000, 7],
      [5, 10],
    ] as const) {
      const bytes = randomBytes(length);
      const pieces = chunkBytes(bytes, max);
      for (const piece of pieces) {
        expect(piece.length).to.be.within(1, max);
      }
      expect(Buffer.concat(pieces).equals(bytes)).to.equal(true);
    }
  });

  it("rejects a limit that is not a positive integer", () => {
    expect(() => chunkBytes(new Uint8Array(1), 0)).to.throw(RangeError);
    expect(() => chunkBytes(new Uint8Array(1), 1.5)).to.throw(RangeError);
  });
});
