import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { ShiftedClock } from "../kit/clock.js";
import { costMicros, MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio, Gateway } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { sharedRedisUrl } from "../kit/lane.js";
import { sleep } from "../kit/poll.js";

const TEXT = "Window test.";
const COST = costMicros(TEXT);
const usd = (micros: number) => micros / 1_000_000;
const DAY_MS = 86_400_000;

describe("enforcement: a key limit with limit_reset", () => {
  const w = useWorld();
  /** Admission of this system reads `clock`, so a test can step into the next UTC day. */
  const clock = new ShiftedClock();
  let clocked: RunningSystem;
  let gw: Gateway;

  before(async function () {
    this.timeout(180_000);
    clocked = await w.startSystem(sharedRedisUrl(w.redis), {}, { clock });
    gw = new Gateway(clocked);
  });

  after(async () => {
    await clocked?.close();
  });

  it("applies per UTC day: refused when the day's spend reaches it, open again the next day", async () => {
    const ws = await gw.workspace();
    const daily = await gw.key(ws, { limit: usd(COST * 2), limit_reset: "daily" });
    const allTime = await gw.key(ws, { limit: usd(COST * 2) });
    for (const key of [daily, allTime]) {
      expectAudio(await gw.speak(key, { model: MODELS.fast, input: TEXT }));
      expectAudio(await gw.speak(key, { model: MODELS.fast, input: TEXT }));
    }
    expectError(
      await gw.speak(daily, { model: MODELS.fast, input: TEXT }),
      403,
      /^Key limit exceeded: \$0\.00024 of the key's limit of \$0\.00024 per day \(limit_reset: daily, UTC\) used$/,
    );
    const shown = (await gw.admin.get(`/api/v1/keys/${daily.hash}`)).body.data;
    expect(shown).to.include({ limit_reset: "daily", limit_remaining: 0 });
    expect(shown.usage_daily).to.be.closeTo(usd(COST * 2), 1e-12);
    // The next UTC day is a new window for the daily key; the all-time one stays spent.
    clock.advance(DAY_MS);
    expectAudio(await gw.speak(daily, { model: MODELS.fast, input: TEXT }));
    expectError(
      await gw.speak(allTime, { model: MODELS.fast, input: TEXT }),
      403,
      /^Key limit exceeded: \$0\.00024 of the key's limit of \$0\.00024 used$/,
    );
    expect(w.fakes.fast.requests).to.have.length(5);
  });

  it("reads the windows admission charged: explain, GET /key usage and the budget on one clock", async () => {
    // A day ahead of the wall clock: a part still reading the wall clock reads another day.
    clock.advance(DAY_MS);
    const ws = await gw.workspace();
    const key = await gw.key(ws, { limit: usd(COST * 10), limit_reset: "daily" });
    const guardrail = await gw.guardrail(ws, { limit_usd: 1, reset_interval: "daily" });
    await gw.assignKeys(guardrail, key);
    expectAudio(await gw.speak(key, { model: MODELS.fast, input: TEXT }));
    const today = new Date(clock.now()).toISOString().slice(0, 10);
    const [budget] = (await gw.explain(key)).budgets;
    expect(budget).to.deep.include({ window: `daily:${today}`, spent_usd: usd(COST) });
    const shown = (await gw.admin.get(`/api/v1/keys/${key.hash}`)).body.data;
    expect(shown.usage_daily).to.be.closeTo(usd(COST), 1e-12);
    expect(shown.limit_remaining).to.be.closeTo(usd(COST * 9), 1e-12);
  });
});

describe("enforcement: limit_reset set on a key that already spent", () => {
  const w = useWorld();

  it("counts what the new window already spent, and a raised limit re-opens it", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws, { limit: usd(COST * 2) });
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    const patched = await w.gw.admin.patch(`/api/v1/keys/${key.hash}`, { limit_reset: "monthly" });
    expect(patched.status).to.equal(200);
    expect(patched.body.data).to.include({ limit_reset: "monthly", limit_remaining: 0 });
    expectError(
      await w.gw.speak(key, { model: MODELS.fast, input: TEXT }),
      403,
      /per month \(limit_reset: monthly, UTC\)/,
    );
    await w.gw.admin.patch(`/api/v1/keys/${key.hash}`, { limit: usd(COST * 3) });
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    // Back to an all-time limit: the same spend, the same answer.
    const cleared = await w.gw.admin.patch(`/api/v1/keys/${key.hash}`, { limit_reset: null });
    expect(cleared.body.data.limit_reset).to.equal(null);
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }), 403, /^Key limit/);
  });
});

describe("enforcement: a key's expires_at", () => {
  const w = useWorld();

  it("answers 401 saying when the key expired, on speech and on /key, once the instant passes", async () => {
    const ws = await w.gw.workspace();
    // Whole seconds, as OpenRouter writes them; a few seconds ahead of now.
    const expiresAt = new Date(Math.ceil((Date.now() + 3_000) / 1000) * 1000);
    const created = await w.gw.admin.post("/api/v1/keys", {
      name: "expiring",
      workspace_id: ws.id,
      expires_at: expiresAt.toISOString().replace(".000Z", "Z"),
    });
    expect(created.status).to.equal(201);
    expect(created.body.data.expires_at).to.equal(expiresAt.toISOString());
    const key = { secret: created.body.key, hash: created.body.data.hash, workspaceId: ws.id };
    const own = new Api(w.gw.url(), key.secret);
    // Valid until then, and now cached by the gateway and the services.
    const before = await own.get("/api/v1/key");
    expect(before.status).to.equal(200);
    expect(before.body.data.expires_at).to.equal(expiresAt.toISOString());
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    while (Date.now() <= expiresAt.getTime()) await sleep(100);
    const message = new RegExp(
      `^API key expired at ${expiresAt.toISOString().replace(/\./g, "\\.")}`,
    );
    expectError(await own.get("/api/v1/key"), 401, message);
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }), 401, message);
    expect(w.fakes.fast.requests).to.have.length(1);
    // An operator extends it: valid again.
    const extended = await w.gw.admin.patch(`/api/v1/keys/${key.hash}`, { expires_at: null });
    expect(extended.status).to.equal(200);
    expect(extended.body.data.expires_at).to.equal(null);
    let status = 401;
    for (let i = 0; i < 50 && status === 401; i++) {
      status = (await own.get("/api/v1/key")).status;
      if (status === 401) await sleep(20);
    }
    expect(status).to.equal(200);
  });

  it("refuses a date in the past, and one without seconds or zone, naming expires_at (400)", async () => {
    const post = (expires_at: unknown) =>
      w.gw.admin.post("/api/v1/keys", { name: "bad expiry", expires_at });
    expectError(await post("2020-01-01T00:00:00Z"), 400, /^expires_at must be in the future/);
    expectError(await post("2030-01-01T00:00Z"), 400, /^expires_at must be an ISO 8601/);
    expectError(await post("2030-01-01T00:00:00"), 400, /^expires_at must be an ISO 8601/);
    expectError(await post("tomorrow"), 400, /^expires_at must be an ISO 8601/);
    expectError(await post("2030-02-30T00:00:00Z"), 400, /^expires_at must be an ISO 8601/);
    expectError(await post(1_900_000_000), 400, /^expires_at must be a string or null/);
    const key = await w.gw.key(await w.gw.workspace());
    expectError(
      await w.gw.admin.patch(`/api/v1/keys/${key.hash}`, { expires_at: "2020-01-01T00:00:00Z" }),
      400,
      /^expires_at must be in the future/,
    );
    expectError(
      await w.gw.admin.patch(`/api/v1/keys/${key.hash}`, { limit_reset: "yearly" }),
      400,
      /^limit_reset must be "daily", "weekly", "monthly" or null/,
    );
  });
});
