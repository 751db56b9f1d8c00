import { expect } from "chai";
import { expectStatus } from "../kit/expect.js";
import { Api, postSpeech } from "../kit/http.js";
import { sleep } from "../kit/poll.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { type HeldStream, holdSpeech, longInput } from "../kit/speech-stream.js";
import { type SplitSystem, startSplitSystem } from "../kit/split-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

const micros = (usd: number) => Math.round(usd * 1_000_000);
/** Short, so the suite is quick; the default (30 s) is the same code path. */
const RECOVERY_BOUND_MS = 3_000;
const MODEL = "railgate/espeak-ng";
const CREDITS_USD = 10;

/** SIGKILL, and resolves once the process is gone. */
async function kill(system: SplitSystem): Promise<void> {
  const proc = system.speech.process;
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  proc.kill("SIGKILL");
  await exited;
}

/** Polls until `ok` holds (bounded: recovery is awaited, never timed). */
async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, what: string) {
  let last: T | undefined;
  for (let i = 0; i < 300; i++) {
    last = await probe();
    if (ok(last)) return last;
    await sleep(100);
  }
  throw new Error(`${what}: still not so after 30 s (last: ${JSON.stringify(last)})`);
}

/**
 * SIGKILL of the speech process, on the split topology against Redis and PostgreSQL: every
 * admitted request still ends in exactly one settlement and one record, and the money reads
 * what the records say, to the micro-dollar.
 */
describe("faults: a speech process killed with requests in flight (split topology)", function () {
  this.timeout(240_000);
  let redis: ThrowawayRedis;
  let system: SplitSystem;
  let admin: Api;

  before(async function () {
    this.timeout(180_000);
    redis = await startRedis();
    system = await startSplitSystem(redis.url, {
      RAILGATE_EMBEDDED_ENGINE: "auto",
      RAILGATE_SPEECH_ENGINE_WORKERS: "1",
      RAILGATE_RECOVERY_BOUND_MS: String(RECOVERY_BOUND_MS),
    });
    admin = new Api(system.baseUrl(), MANAGEMENT_KEY);
  });

  after(async () => {
    await system?.stop();
    await redis?.stop();
  });

  /** A key in a workspace of its own, with credits. */
  async function funded(name: string) {
    const ws = await admin.post("/api/v1/workspaces", { name, slug: `${name}-${Date.now()}` });
    expectStatus(ws, 201);
    const workspaceId = ws.body.data.id as string;
    const created = await admin.post("/api/v1/keys", { name, workspace_id: workspaceId });
    expectStatus(created, 201);
    expectStatus(
      await admin.post(`/api/v1/workspaces/${workspaceId}/credits`, { amount_usd: CREDITS_USD }),
      200,
    );
    return {
      secret: created.body.key as string,
      hash: created.body.data.hash as string,
      workspaceId,
    };
  }

  /** Spend and credits read the sum of the records' costs, to the micro-dollar. */
  async function expectBooksMatch(
    key: { secret: string; workspaceId: string },
    recordCostsMicros: number,
  ) {
    const own = new Api(system.baseUrl(), key.secret);
    const usage = await own.get("/api/v1/key");
    expectStatus(usage, 200);
    expect(micros(usage.body.data.usage)).to.equal(recordCostsMicros);
    const credits = await admin.get(`/api/v1/workspaces/${key.workspaceId}/credits`);
    expectStatus(credits, 200);
    expect(micros(credits.body.data.balance_usd)).to.equal(
      CREDITS_USD * 1_000_000 - recordCostsMicros,
    );
  }

  it("settles streams cut by a SIGKILL as interrupted within the bound, each billed for what it served, with one record each", async () => {
    const key = await funded("killed-streams");
    const characters = 6000;
    const held: HeldStream[] = [];
    for (let i = 0; i < 4; i++) {
      held.push(
        await holdSpeech(system.baseUrl(), key.secret, {
          model: MODEL,
          voice: "en-us",
          input: longInput(characters),
        }),
      );
    }
    // A heartbeat or two: what each stream has served is checkpointed.
    await sleep(1_500);
    await kill(system);
    for (const h of held) h.abort();
    // No speech process runs now: the guardrail process settles what the dead one held.
    const leases = `rg:{w:${key.workspaceId}}:resv-i`;
    expect(await redis.client().zcard(leases)).to.equal(held.length);
    await eventually(
      () => redis.client().zcard(leases),
      (n) => n === 0,
      "the dead process's reservations settled",
    );
    await system.restartSpeech();

    const own = new Api(system.baseUrl(), key.secret);
    const records = [];
    for (const h of held) {
      const res = await eventually(
        () => own.get(`/api/v1/generation?id=${h.generationId}`),
        (r) => r.status === 200,
        `the record of ${h.generationId}`,
      );
      records.push(res.body.data);
    }
    for (const r of records) {
      expect(r.status).to.equal("interrupted");
      // Billed for what it served as far as its checkpoint knew: less than the whole input.
      expect(micros(r.cost_usd)).to.be.lessThan(characters);
    }
    const total = records.reduce((n, r) => n + micros(r.cost_usd), 0);
    await expectBooksMatch(key, total);
  });

  it("keeps the record of every response that arrived whole, though the process died just after", async () => {
    const key = await funded("whole-then-killed");
    const requests = Array.from({ length: 12 }, (_, i) =>
      postSpeech(system.baseUrl(), key.secret, {
        model: MODEL,
        voice: "en-us",
        input: `Request number ${i} arrives whole before the process dies.`,
      }),
    );
    // Killed as soon as the first response has arrived whole: the others end about now too,
    // before the request log's writer has had its batch window.
    const first = await Promise.race(requests);
    await kill(system);
    expect(first.status).to.equal(200);
    const answers = await Promise.all(requests);
    await system.restartSpeech();
    const whole = answers.filter((a) => a.status === 200 && a.headers.get("x-generation-id"));
    expect(whole.length).to.be.greaterThan(0);
    const own = new Api(system.baseUrl(), key.secret);
    let total = 0;
    for (const a of whole) {
      const id = a.headers.get("x-generation-id");
      const res = await eventually(
        () => own.get(`/api/v1/generation?id=${id}`),
        (r) => r.status === 200,
        `the record of ${id}`,
      );
      total += micros(res.body.data.cost_usd);
    }
    // Every admitted request has one record (those cut mid-body too): the books match them all.
    const listed = await eventually(
      async () => {
        const spent = micros((await own.get("/api/v1/key")).body.data.usage);
        const list = await own.get("/api/v1/generations?limit=100");
        const costs = (list.body.data as { cost_usd: number }[]).reduce(
          (n, g) => n + micros(g.cost_usd),
          0,
        );
        return { spent, costs, count: list.body.data.length as number };
      },
      (v) => v.spent === v.costs,
      "usage equal to the records' costs",
    );
    expect(listed.costs).to.be.at.least(total);
    await expectBooksMatch(key, listed.costs);
  });
});
