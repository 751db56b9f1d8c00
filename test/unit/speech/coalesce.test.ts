import { expect } from "chai";
import { coalesce } from "../../../services/speech/coalesce.js";

const piece = (n: number, fill = n) => new Uint8Array(n).fill(fill);
const tick = () => new Promise((r) => setImmediate(r));

/** A source whose pieces are all there at once (a fast producer). */
async function* ready(pieces: Uint8Array[], log: string[] = []) {
  try {
    for (const p of pieces) {
      log.push(`produce ${p.byteLength}`);
      yield p;
    }
  } finally {
    log.push("source finally");
  }
}

describe("coalesce: audio pieces merged only while the reader is behind", () => {
  it("hands a reader that keeps up every piece as it is, in order", async () => {
    async function* slow() {
      for (const n of [10, 20, 30]) {
        await new Promise((r) => setTimeout(r, 5));
        yield piece(n);
      }
    }
    const sizes: number[] = [];
    for await (const p of coalesce(slow(), 1000)) sizes.push(p.byteLength);
    expect(sizes).to.deep.equal([10, 20, 30]);
  });

  it("merges what piled up while the reader was busy, never past the cap, bytes and order intact", async () => {
    const pieces = [piece(100, 1), piece(100, 2), piece(100, 3), piece(100, 4), piece(100, 5)];
    const out: Uint8Array[] = [];
    for await (const p of coalesce(ready(pieces), 250)) {
      out.push(p);
      // A busy reader: the producer fills the queue meanwhile.
      for (let i = 0; i < 10; i++) await tick();
    }
    const sizes = out.map((p) => p.byteLength);
    expect(Math.max(...sizes)).to.be.at.most(250);
    expect(sizes.length).to.be.below(5);
    expect(sizes.reduce((a, b) => a + b, 0)).to.equal(500);
    expect(Buffer.concat(out)).to.deep.equal(Buffer.concat(pieces));
  });

  it("stops reading ahead once the cap is waiting (a slow reader pushes back)", async () => {
    let produced = 0;
    async function* endless() {
      for (;;) {
        produced++;
        yield piece(100);
      }
    }
    const it = coalesce(endless(), 300);
    await it.next();
    for (let i = 0; i < 50; i++) await tick();
    // At most the cap in the queue, plus the piece in hand and one read in flight.
    expect(produced).to.be.at.most(6);
    await it.return(undefined);
  });

  it("passes the source's error to the reader after the pieces before it", async () => {
    async function* failing() {
      yield piece(5);
      throw new Error("provider dropped the connection");
    }
    const got: number[] = [];
    let error: unknown;
    try {
      for await (const p of coalesce(failing(), 100)) got.push(p.byteLength);
    } catch (err) {
      error = err;
    }
    expect(got).to.deep.equal([5]);
    expect(String(error)).to.match(/provider dropped the connection/);
  });

  it("ends the source when the reader stops early (its finally runs)", async () => {
    const log: string[] = [];
    for await (const _ of coalesce(ready([piece(1), piece(2), piece(3)], log), 1)) break;
    expect(log).to.include("source finally");
  });
});
