import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { expectStatus } from "../kit/expect.js";

import { Api } from "../kit/http.js";
import { sleep } from "../kit/poll.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { holdSpeech, longInput } from "../kit/speech-stream.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

const micros = (usd: number) => Math.round(usd * 1_000_000);

/** Polls until `ok` holds (bounded: recovery is awaited, never timed). */
async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, what: string) {
  let last: T | undefined;
  for (let i = 0; i < 200; i++) {
    last = await probe();
    if (ok(last)) return last;
    await sleep(100);
  }
  throw new Error(`${what}: still not so after 20 s (last: ${JSON.stringify(last)})`);
}

/**
 * Destructive (freezes Redis), so on a system of its own. A speech stream
 * ends while Redis does not answer: its settlement and generation record are
 * kept and applied once Redis answers again, exactly once, even though the
 * first attempts reached the frozen Redis and run when it wakes up.
 */
describe("faults: settlements and generation records while Redis is down", function () {
  this.timeout(90_000);
  let redis: ThrowawayRedis;
  let system: RunningSystem;
  let admin: Api;
  let speaker: Api;
  let secret: string;
  let workspaceId: string;
  let base: string;

  before(async function () {
    this.timeout(120_000);
    redis = await startRedis();
    system = await startTestSystem(redis.url, { embeddedEngine: "auto", enginePoolSize: 1 });
    base = `http://127.0.0.1:${system.gatewayPorts.global}`;
    admin = new Api(base, MANAGEMENT_KEY);
    const key = await admin.post("/api/v1/keys", { name: "speaker" });
    expectStatus(key, 201);
    secret = key.body.key;
    workspaceId = key.body.data.workspace_id;
    speaker = new Api(base, secret);
    expectStatus(
      await admin.post(`/api/v1/workspaces/${workspaceId}/credits`, { amount_usd: 10 }),
      200,
    );
  });

  after(async () => {
    redis?.thaw();
    await system?.close();
    await redis?.stop();
  });

  it("applies the settlement and the record of a stream that ended during a freeze, once", async () => {
    const characters = 6000;
    const held = await holdSpeech(base, secret, {
      model: "railgate/espeak-ng",
      voice: "en-us",
      input: longInput(characters),
    });
    expect(held.generationId).to.match(/^gen-/);
    redis.freeze();
    // The client leaves mid-stream: the stream settles (billed for what it delivered) and
    // writes its record while Redis answers nothing; both attempts time out and are kept.
    held.abort();
    await sleep(2500);
    redis.thaw();

    const record = await eventually(
      () => speaker.get(`/api/v1/generation?id=${held.generationId}`),
      (r) => r.status === 200,
      "the generation record written after the freeze",
    );
    const generation = record.body.data;
    expect(generation.status).to.equal("cancelled");
    // Cut short: billed for less than the whole input ($1 per million characters).
    expect(micros(generation.cost_usd)).to.be.lessThan(characters);
    // The reservation (the whole input) was replaced by exactly what the record says was
    // charged: not left reserved (settlement lost), not refunded twice (settled twice).
    const balance = await eventually(
      () => admin.get(`/api/v1/workspaces/${workspaceId}/credits`),
      (r) =>
        r.status === 200 &&
        micros(r.body.data.balance_usd) === 10_000_000 - micros(generation.cost_usd),
      "the workspace balance after the settlement is applied",
    );
    expect(micros(balance.body.data.balance_usd)).to.equal(
      10_000_000 - micros(generation.cost_usd),
    );
    // And it stays so: no late duplicate lands afterwards.
    await sleep(1500);
    const again = await admin.get(`/api/v1/workspaces/${workspaceId}/credits`);
    expect(micros(again.body.data.balance_usd)).to.equal(10_000_000 - micros(generation.cost_usd));
  });
});
