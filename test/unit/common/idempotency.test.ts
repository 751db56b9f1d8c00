import { expect } from "chai";
import {
  IDEMPOTENCY_CLAIM_SECONDS,
  IDEMPOTENCY_TTL_SECONDS,
  idempotencyId,
  idempotencyKeyProblem,
} from "../../../domain/idempotency.js";
import { MemoryStore } from "../../../store/memory-store.js";
import { ShiftedClock } from "../../kit/clock.js";

describe("Idempotency-Key", () => {
  it("accepts 1 to 255 printable ASCII characters, sent once, and names the rule otherwise", () => {
    for (const good of ["a", "550e8400-e29b-41d4-a716-446655440000", " ~!", "x".repeat(255)])
      expect(idempotencyKeyProblem(good), good).to.equal(undefined);
    expect(idempotencyKeyProblem(undefined)).to.equal(undefined);
    for (const bad of ["", "x".repeat(256), "tab\there", "caf\u00e9", "line\n"]) {
      expect(idempotencyKeyProblem(bad), JSON.stringify(bad)).to.equal(
        "Idempotency-Key must be 1 to 255 printable ASCII characters",
      );
    }
    expect(idempotencyKeyProblem(["a", "b"])).to.equal("Idempotency-Key must be sent once");
  });

  it("gives each caller its own id for one key", () => {
    expect(idempotencyId("caller-a", "k")).to.not.equal(idempotencyId("caller-b", "k"));
    expect(idempotencyId("caller-a", "k")).to.equal(idempotencyId("caller-a", "k"));
    expect(idempotencyId("caller-a", "k")).to.match(/^[0-9a-f]{64}$/);
  });

  describe("the embedded store's records", () => {
    const clock = new ShiftedClock();
    const store = new MemoryStore(undefined, clock);

    it("frees a claim nobody answered once it expires, and keeps an answer for its TTL", async () => {
      const claim = await store.claimIdempotency("dead", "fp", IDEMPOTENCY_CLAIM_SECONDS);
      expect(claim.state).to.equal("claimed");
      clock.advance(IDEMPOTENCY_CLAIM_SECONDS * 1000 - 1_000);
      expect(
        (await store.claimIdempotency("dead", "fp", IDEMPOTENCY_CLAIM_SECONDS)).state,
      ).to.equal("in-progress");
      clock.advance(2_000);
      const retry = await store.claimIdempotency("dead", "fp", IDEMPOTENCY_CLAIM_SECONDS);
      expect(retry.state).to.equal("claimed");
      // The dead claim's token completes nothing: the retry's answer is the one kept.
      const answer = { status: 200, body: "{}" };
      if (claim.state !== "claimed" || retry.state !== "claimed") return;
      expect(
        await store.completeIdempotency("dead", claim.token, answer, IDEMPOTENCY_TTL_SECONDS),
      ).to.equal(false);
      expect(
        await store.completeIdempotency("dead", retry.token, answer, IDEMPOTENCY_TTL_SECONDS),
      ).to.equal(true);
      clock.advance(IDEMPOTENCY_TTL_SECONDS * 1000 - 1_000);
      expect((await store.claimIdempotency("dead", "fp", 1)).state).to.equal("done");
      clock.advance(2_000);
      expect((await store.claimIdempotency("dead", "fp", 1)).state).to.equal("claimed");
    });

    it("keeps a top-up's marker for its TTL", async () => {
      await store.addCredits("ws", 0);
      expect((await store.addCreditsOnce("ws", 5, "m", 60)).applied).to.equal(true);
      clock.advance(59_000);
      expect((await store.addCreditsOnce("ws", 5, "m", 60)).applied).to.equal(false);
      clock.advance(2_000);
      expect(await store.addCreditsOnce("ws", 5, "m", 60)).to.deep.equal({
        balanceMicros: 10,
        applied: true,
      });
    });
  });
});
