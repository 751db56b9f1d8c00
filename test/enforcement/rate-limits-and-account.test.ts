import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { ShiftedClock } from "../kit/clock.js";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio, Gateway, type Key } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";
import type { SpeechResponse } from "../kit/http.js";
import { sharedRedisUrl } from "../kit/lane.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";

const TEXT = "Rate test.";

/**
 * Admission in every system of this file reads this clock: rate windows are whole minutes, and
 * each test starts its burst where it wants in one (not straddling two windows, or well into a
 * minute) by moving the clock there instead of waiting for a real minute boundary.
 */
const clock = new ShiftedClock();

/** 429 with the error body and a Retry-After that points at the end of the current window. */
function expect429(res: SpeechResponse): void {
  const leftInWindow = clock.secondsLeftInMinute();
  expectError(res, 429, /^Rate limit exceeded/);
  const retryAfter = res.headers.get("retry-after") ?? "";
  expect(retryAfter).to.match(/^\d+$/);
  expect(Number(retryAfter)).to.be.within(1, leftInWindow + 1);
}

async function burst(gw: Gateway, key: Key, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++)
    statuses.push((await gw.speak(key, { model: MODELS.fast, input: TEXT })).status);
  return statuses;
}

describe("enforcement: rate limits and account settings", () => {
  const w = useWorld();
  /** A second system on the shared Redis and catalog whose admission reads `clock`. */
  let clocked: RunningSystem;
  let main: Gateway;

  before(async function () {
    this.timeout(180_000);
    clocked = await w.startSystem(sharedRedisUrl(w.redis), {}, { clock });
    main = new Gateway(clocked);
  });

  after(async () => {
    await clocked?.close();
  });

  describe("a key's own rate_limit_per_minute", () => {
    it("the request past it is 429 with Retry-After; other keys are unaffected", async () => {
      clock.startMinuteAt(0);
      const ws = await main.workspace();
      const key = await main.key(ws, { rate_limit_per_minute: 2 });
      const other = await main.key(ws);
      expect(await burst(main, key, 2)).to.deep.equal([200, 200]);
      expect429(await main.speak(key, { model: MODELS.fast, input: TEXT }));
      expect(w.fakes.fast.requests).to.have.length(2);
      expect(await burst(main, other, 3)).to.deep.equal([200, 200, 200]);
    });
  });

  describe("RateLimit headers (IETF draft) on speech responses", () => {
    /** The three fields as numbers; each must be present and a whole number. */
    function window(res: SpeechResponse): { limit: number; remaining: number; reset: number } {
      const read = (name: string) => {
        const v = res.headers.get(name) ?? "";
        expect(v, name).to.match(/^\d+$/);
        return Number(v);
      };
      return {
        limit: read("ratelimit-limit"),
        remaining: read("ratelimit-remaining"),
        reset: read("ratelimit-reset"),
      };
    }

    it("count down the key's window, and the 429 carries Retry-After and Remaining 0", async () => {
      clock.startMinuteAt(5_000);
      const ws = await main.workspace();
      const key = await main.key(ws, { rate_limit_per_minute: 3 });
      const seen = [];
      for (let i = 0; i < 3; i++) {
        const res = await main.speak(key, { model: MODELS.fast, input: TEXT });
        expect(res.status).to.equal(200);
        const leftInWindow = clock.secondsLeftInMinute();
        const state = window(res);
        expect(state.reset).to.be.within(1, leftInWindow + 1);
        seen.push([state.limit, state.remaining]);
      }
      expect(seen).to.deep.equal([
        [3, 2],
        [3, 1],
        [3, 0],
      ]);
      const refused = await main.speak(key, { model: MODELS.fast, input: TEXT });
      expect429(refused);
      const state = window(refused);
      expect([state.limit, state.remaining]).to.deep.equal([3, 0]);
      expect(String(state.reset)).to.equal(refused.headers.get("retry-after"));
      // Another key counts in its own window.
      const other = await main.key(ws, { rate_limit_per_minute: 3 });
      expect(
        window(await main.speak(other, { model: MODELS.fast, input: TEXT })).remaining,
      ).to.equal(2);
    });
  });

  describe("a system with RAILGATE_RATE_LIMIT_PER_MINUTE=0 (unlimited)", () => {
    let redis: ThrowawayRedis;
    let system: RunningSystem;
    let gw: Gateway;

    before(async function () {
      this.timeout(180_000);
      redis = await startRedis();
      system = await w.startSystem(redis.url, { RAILGATE_RATE_LIMIT_PER_MINUTE: "0" });
      gw = new Gateway(system);
    });

    after(async () => {
      await system?.close();
      await redis?.stop();
    });

    it("sends no RateLimit headers for a key without a limit", async () => {
      const key = await gw.key(await gw.workspace());
      const res = await gw.speak(key, { model: MODELS.fast, input: TEXT });
      expect(res.status).to.equal(200);
      for (const name of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"])
        expect(res.headers.get(name), name).to.equal(null);
    });
  });

  describe("a system with RAILGATE_RATE_LIMIT_PER_MINUTE=3 and an account refusing google safety retention", () => {
    let redis: ThrowawayRedis;
    let system: RunningSystem;
    let gw: Gateway;

    before(async function () {
      this.timeout(180_000);
      redis = await startRedis();
      system = await w.startSystem(
        redis.url,
        {
          RAILGATE_RATE_LIMIT_PER_MINUTE: "3",
          RAILGATE_ACCOUNT_ALLOW_SAFETY_RETENTION_GOOGLE: "false",
        },
        { clock },
      );
      gw = new Gateway(system);
    });

    after(async () => {
      await system?.close();
      await redis?.stop();
    });

    it("the fourth request of a minute is 429 with Retry-After and the error body", async () => {
      // Well into a minute, so a Retry-After of a whole minute would be wrong.
      clock.startMinuteAt(10_000);
      const ws = await gw.workspace();
      const key = await gw.key(ws);
      const other = await gw.key(ws);
      expect(await burst(gw, key, 3)).to.deep.equal([200, 200, 200]);
      expect429(await gw.speak(key, { model: MODELS.fast, input: TEXT }));
      expect429(await gw.speak(key, { model: MODELS.fast, input: TEXT }));
      expect(w.fakes.fast.requests).to.have.length(3);
      // Another key of the same workspace has its own allowance.
      expect(await burst(gw, other, 3)).to.deep.equal([200, 200, 200]);
    });

    it("a key's own rate_limit_per_minute replaces the system's", async () => {
      clock.startMinuteAt(0);
      const ws = await gw.workspace();
      const key = await gw.key(ws, { rate_limit_per_minute: 5 });
      expect(await burst(gw, key, 5)).to.deep.equal([200, 200, 200, 200, 200]);
      expect429(await gw.speak(key, { model: MODELS.fast, input: TEXT }));
    });

    it("the account's refusal of safety retention is inherited and cannot be loosened", async () => {
      const inherit = await gw.governedKey({ enforce_zdr_google: true });
      expectError(
        await gw.speak(inherit.key, { model: MODELS.google, input: TEXT }),
        404,
        /^No endpoints available matching your guardrail restrictions and data policy$/,
      );
      const loosen = await gw.governedKey({
        enforce_zdr_google: true,
        allow_safety_retention_google: true,
      });
      expectError(await gw.speak(loosen.key, { model: MODELS.google, input: TEXT }), 404);
      // Without ZDR, safety retention is not in question.
      const plain = await gw.governedKey({});
      expectAudio(
        await gw.speak(plain.key, { model: MODELS.google, input: TEXT }),
        "google-safety",
      );
      const explained = await gw.explain(loosen.key, `?model=${MODELS.google}`);
      expect(explained.effective_policy.allow_safety_retention_google).to.equal(false);
    });
  });
});
