import { expect } from "chai";
import { nextAttemptAt, retryDelayMs } from "../../../services/webhooks/backoff.js";

const S = { baseMs: 1_000, maxMs: 60_000, maxAgeMs: 24 * 3600 * 1000 };

describe("webhooks: retry backoff", () => {
  it("doubles per attempt up to the maximum; the jitter spans the upper half", () => {
    const low = (n: number) => retryDelayMs(n, S, () => 0);
    const high = (n: number) => retryDelayMs(n, S, () => 1);
    expect([1, 2, 3, 4].map(high)).to.deep.equal([1_000, 2_000, 4_000, 8_000]);
    expect([1, 2, 3, 4].map(low)).to.deep.equal([500, 1_000, 2_000, 4_000]);
    expect(high(7)).to.equal(60_000);
    expect(high(50)).to.equal(60_000);
    expect(low(50)).to.equal(30_000);
  });

  it("gives up (null) once the next attempt would come after the maximum age", () => {
    const created = new Date("2026-11-26T00:00:00Z");
    const one = (now: Date) => nextAttemptAt(created, 20, now, S, () => 1);
    expect(one(new Date("2026-11-26T12:00:00Z"))?.toISOString()).to.equal(
      "2026-11-26T12:01:00.000Z",
    );
    expect(one(new Date("2026-11-26T23:59:30Z"))).to.equal(null);
  });
});
