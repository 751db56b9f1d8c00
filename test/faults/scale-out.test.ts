import { rmSync } from "node:fs";
import { request } from "node:http";
import { expect } from "chai";
import { writeBenchCatalog } from "../../bench/system-process.js";
import { type ClusterDeployment, startClusterDeployment } from "../kit/cluster-deployment.js";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { expectStatus } from "../kit/expect.js";
import { FakeOpenAi } from "../kit/fake-openai.js";
import { Api } from "../kit/http.js";
import { makeTempDir } from "../kit/processes.js";
import { startRedisCluster, type ThrowawayCluster } from "../kit/redis-cluster.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

const micros = (usd: number) => Math.round(usd * 1_000_000);
const MODEL = "bench/fixed-clip";

/** The fields of a GET /api/v1/generations record this suite sums. */
interface GenerationRecord {
  cost_usd: number;
  status: string;
  created_at: string;
}

interface SpeechOutcome {
  status: number;
  /** The response ended whole (not cut). */
  complete: boolean;
  bytes: number;
  generationId: string;
  error?: string;
}

/**
 * One speech request on a connection of its own (no pooled keep-alive socket a draining
 * gateway could close under it): through a TCP balancer, each request is a fresh pick.
 */
function speak(baseUrl: string, key: string, input: string): Promise<SpeechOutcome> {
  const payload = JSON.stringify({ model: MODEL, voice: "alloy", input });
  return new Promise((resolve) => {
    const req = request(`${baseUrl}/api/v1/audio/speech`, {
      method: "POST",
      agent: false,
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(payload),
      },
    });
    req.on("error", (err) =>
      resolve({ status: 0, complete: false, bytes: 0, generationId: "", error: String(err) }),
    );
    req.on("response", (res) => {
      let bytes = 0;
      const body: Buffer[] = [];
      res.on("data", (c: Buffer) => {
        bytes += c.byteLength;
        if (res.statusCode !== 200) body.push(c);
      });
      const done = () =>
        resolve({
          status: res.statusCode ?? 0,
          complete: res.complete,
          bytes,
          generationId: String(res.headers["x-generation-id"] ?? ""),
          error: res.statusCode === 200 ? undefined : Buffer.concat(body).toString("utf8"),
        });
      res.on("end", done);
      res.on("error", done);
      res.on("aborted", done);
    });
    req.end(payload);
  });
}

/** The status of a speech request: the connection is dropped once the status line is in. */
function speechStatus(baseUrl: string, key: string, input: string): Promise<number> {
  const payload = JSON.stringify({ model: MODEL, voice: "alloy", input });
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}/api/v1/audio/speech`, {
      method: "POST",
      agent: false,
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(payload),
      },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      resolve(res.statusCode ?? 0);
      res.destroy();
    });
    req.end(payload);
  });
}

/**
 * Three gateways, two guardrail and two speech processes over real gRPC on one Redis Cluster
 * and one PostgreSQL request log, each kind behind a round-robin TCP balancer, as Kubernetes
 * runs the chart: what one replica does, every other sees, and replacing every process in turn
 * under load fails nothing and leaves nothing unsettled.
 */
describe("faults: scale-out (3 gateways, 2 guardrail, 2 speech)", function () {
  this.timeout(240_000);
  let cluster: ThrowawayCluster;
  let database: TestDatabase;
  let upstream: FakeOpenAi;
  let dir: string;
  let deployment: ClusterDeployment;
  let admin: Api;

  before(async function () {
    this.timeout(180_000);
    const [c, d] = await Promise.all([startRedisCluster(), createTestDatabase("postgres")]);
    cluster = c;
    database = d;
    // Four pieces 40 ms apart: each stream is in flight for a while, so SIGTERMs meet streams.
    upstream = await new FakeOpenAi({ chunks: 4, chunkDelayMs: 40, secondsPerChar: 0.01 }).start();
    dir = makeTempDir("railgate-scale-");
    deployment = await startClusterDeployment({
      redisClusterNodes: cluster.nodes,
      databaseUrl: database.url as string,
      gateways: 3,
      guardrails: 2,
      speeches: 2,
      env: {
        RAILGATE_SPEECH_CATALOG_FILE: writeBenchCatalog(
          dir,
          Number(new URL(upstream.baseUrl).port),
        ),
        RAILGATE_SHUTDOWN_GRACE_MS: "10000",
        // Seven processes, a Redis Cluster and PostgreSQL on a shared machine: a command can wait
        // for the CPU longer than the 1 s default, which would answer 503 (store unavailable).
        RAILGATE_REDIS_COMMAND_TIMEOUT_MS: "5000",
      },
    });
    admin = new Api(deployment.url, MANAGEMENT_KEY);
  });

  after(async () => {
    await deployment?.stop();
    await upstream?.close();
    await database?.dispose();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh workspace with `creditsUsd` of credits and one key in it. */
  async function workspaceWithKey(name: string, creditsUsd: number, key: Record<string, unknown>) {
    const ws = await admin.post("/api/v1/workspaces", { name });
    expectStatus(ws, 201);
    const workspaceId = ws.body.data.id as string;
    if (creditsUsd > 0) {
      expectStatus(
        await admin.post(`/api/v1/workspaces/${workspaceId}/credits`, { amount_usd: creditsUsd }),
        200,
      );
    }
    const created = await admin.post("/api/v1/keys", {
      name: `${name} key`,
      workspace_id: workspaceId,
      ...key,
    });
    expectStatus(created, 201);
    return {
      workspaceId,
      secret: created.body.key as string,
      hash: created.body.data.hash as string,
    };
  }

  const balance = async (workspaceId: string) =>
    micros((await admin.get(`/api/v1/workspaces/${workspaceId}/credits`)).body.data.balance_usd);
  const keyUsage = async (hash: string) =>
    micros((await admin.get(`/api/v1/keys/${hash}`)).body.data.usage);

  /** Every generation record of a key, all pages. */
  async function records(hash: string): Promise<GenerationRecord[]> {
    const all: GenerationRecord[] = [];
    let cursor = "";
    for (;;) {
      const res = await admin.get(
        `/api/v1/generations?key_hash=${hash}&limit=100${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expectStatus(res, 200);
      all.push(...res.body.data);
      if (!res.body.next_cursor) return all;
      cursor = encodeURIComponent(res.body.next_cursor);
    }
  }

  /** The records of a key once `count` of them are written (the log is written in batches). */
  async function recordsWhenWritten(hash: string, count: number) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = await records(hash);
      if (found.length >= count || Date.now() > deadline) return found;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it("keeps key limits, credits and rate limits exact across replicas", async () => {
    // 10 characters = $0.00001 a request. The key limit admits 7 requests, the credits 5 and
    // the rate limit 12 a minute: 40 requests at once through 3 gateways and 2 speech services.
    const input = "ten chars.";
    const limited = await workspaceWithKey("scale limit", 1, { limit: 0.00007 });
    const credited = await workspaceWithKey("scale credits", 0.00005, {});
    const rated = await workspaceWithKey("scale rate", 1, { rate_limit_per_minute: 12 });
    const burst = (key: string) =>
      Promise.all(Array.from({ length: 40 }, () => speak(deployment.url, key, input)));
    // Rate limits count per UTC minute: a burst that straddles a minute's end is admitted 12 in
    // each (CI saw 24). The child processes read the real clock, so start well inside a minute.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 30_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 200));
    const [byLimit, byCredits, byRate] = await Promise.all([
      burst(limited.secret),
      burst(credited.secret),
      burst(rated.secret),
    ]);
    const ok = (outcomes: SpeechOutcome[]) => outcomes.filter((o) => o.status === 200).length;
    const statuses = (outcomes: SpeechOutcome[]) =>
      [...new Set(outcomes.map((o) => o.status))].sort();
    console.log(
      `      scale-out: 40 concurrent requests each: key limit ${ok(byLimit)} served (of 7), credits ${ok(byCredits)} (of 5), rate ${ok(byRate)} (of 12)`,
    );
    for (const outcomes of [byLimit, byCredits, byRate]) {
      for (const o of outcomes) expect(o.status, o.error).to.be.oneOf([200, 402, 403, 429]);
    }
    expect(statuses(byLimit)).to.include(200);
    expect(ok(byLimit)).to.equal(7);
    expect(ok(byCredits)).to.equal(5);
    expect(ok(byRate)).to.equal(12);
    // Spend is exactly what was served: no reservation left behind, none charged twice.
    expect(await keyUsage(limited.hash)).to.equal(7 * input.length);
    expect(await balance(credited.workspaceId)).to.equal(0);
    expect(await keyUsage(rated.hash)).to.equal(12 * input.length);
    expect(await balance(rated.workspaceId)).to.equal(1_000_000 - 12 * input.length);
  });

  it("enforces a change made through one gateway on every other within 100 ms", async () => {
    const key = await workspaceWithKey("scale propagation", 1, {});
    const gateways = deployment.replicas.gateway;
    // Warm every gateway's key cache and every service's view of the key.
    for (const g of gateways) {
      expectStatus(await new Api(g.url, key.secret).get("/api/v1/key"), 200);
      expect((await speak(g.url, key.secret, "warm up.")).status).to.equal(200);
    }
    const [first, ...others] = gateways as [(typeof gateways)[0], ...typeof gateways];
    const disabled = await new Api(first.url, MANAGEMENT_KEY).patch(`/api/v1/keys/${key.hash}`, {
      disabled: true,
    });
    expectStatus(disabled, 200);
    const changedAt = performance.now();
    // Each other gateway, polled directly and back to back from the moment the change was
    // acknowledged: the key's own read and a speech request (its status line only). The figure
    // is when the first poll that both refused was sent; every poll after it is refused too.
    const polls = await Promise.all(
      others.map(async (g) => {
        const api = new Api(g.url, key.secret);
        for (;;) {
          const sentAt = performance.now() - changedAt;
          const [read, spoken] = await Promise.all([
            api.get("/api/v1/key"),
            speechStatus(g.url, key.secret, "still on?"),
          ]);
          if (read.status === 401 && spoken === 401) {
            return { sentAt, answeredAt: performance.now() - changedAt };
          }
          if (sentAt > 5_000) return { sentAt: Number.POSITIVE_INFINITY, answeredAt: sentAt };
        }
      }),
    );
    console.log(
      `      scale-out: key disabled via gateway 1; first request refused by gateways 2 and 3 sent ${polls.map((p) => `${p.sentAt.toFixed(1)} ms`).join(", ")} after the change (answered at ${polls.map((p) => `${p.answeredAt.toFixed(1)} ms`).join(", ")})`,
    );
    for (const g of others) {
      // And stays refused.
      expect((await new Api(g.url, key.secret).get("/api/v1/key")).status).to.equal(401);
    }
    const times = polls.map((p) => p.sentAt);
    for (const t of times) expect(t).to.be.lessThan(100);
  });

  it("replaces every process in turn under load (c=20): 0 failed, nothing unsettled", async () => {
    const input = "A rolling restart must not drop this sentence.";
    const key = await workspaceWithKey("scale rolling", 10, {
      rate_limit_per_minute: 1_000_000,
    });
    const outcomes: SpeechOutcome[] = [];
    let loading = true;
    const worker = async () => {
      while (loading) outcomes.push(await speak(deployment.url, key.secret, input));
    };
    const workers = Array.from({ length: 20 }, worker);
    const exitCodes: string[] = [];
    const steps: string[] = [];
    const startedAt = Date.now();
    for (const kind of ["guardrail", "speech", "gateway"] as const) {
      for (let i = 0; i < deployment.replicas[kind].length; i++) {
        const step = await deployment.replace(kind, i);
        exitCodes.push(`${kind}[${i}]=${step.exitCode}`);
        steps.push(`${kind}[${i}] up ${step.startMs} ms, drained ${step.drainMs} ms`);
      }
    }
    // A little load on the final set too.
    await new Promise((r) => setTimeout(r, 500));
    loading = false;
    await Promise.all(workers);
    const seconds = (Date.now() - startedAt) / 1000;
    const failed = outcomes.filter((o) => o.status !== 200 || !o.complete);
    const sizes = new Set(outcomes.filter((o) => o.status === 200).map((o) => o.bytes));
    const b = deployment.balancers;
    console.log(
      `      scale-out: rolling restart of 7 processes in ${seconds.toFixed(1)} s: ${outcomes.length} requests at c=20, ${failed.length} failed; balancer connects refused and retried: gateway ${b.gateway.refused}, guardrail ${b.guardrail.refused}, speech ${b.speech.refused}`,
    );
    console.log(`      scale-out: steps: ${steps.join("; ")}`);
    expect(
      failed.slice(0, 5).map((o) => `${o.status} ${o.error ?? ""}`),
      "failed requests",
    ).to.deep.equal([]);
    expect(exitCodes).to.deep.equal(exitCodes.map((e) => `${e.split("=")[0]}=0`));
    // Complete audio: every answer is the same whole clip.
    expect([...sizes]).to.have.length(1);
    expect([...sizes][0]).to.be.greaterThan(0);

    // Nothing unsettled: the records' costs, the key's spend and the credits used all agree.
    const found = await recordsWhenWritten(key.hash, outcomes.length);
    expect(found).to.have.length(outcomes.length);
    expect(found.every((r) => r.status === "completed")).to.equal(true);
    const recorded = found.reduce((sum, r) => sum + micros(r.cost_usd), 0);
    expect(recorded).to.equal(outcomes.length * input.length);
    expect(await keyUsage(key.hash)).to.equal(recorded);
    expect(await balance(key.workspaceId)).to.equal(10_000_000 - recorded);

    // Activity totals equal the sum of the records: /usage by key (per day) and by model (per
    // hour) cover today; /activity counts completed UTC days only (OpenRouter's definition), so
    // it holds exactly the records dated before today (none, unless the run crossed midnight).
    for (const query of ["granularity=day&group_by=key", "granularity=hour&group_by=model"]) {
      const usage = await admin.get(`/api/v1/usage?${query}&workspace_id=${key.workspaceId}`);
      expectStatus(usage, 200);
      const points = usage.body.data as { requests: number; spend_usd: number }[];
      expect(
        points.reduce((n, p) => n + p.requests, 0),
        query,
      ).to.equal(found.length);
      expect(
        points.reduce((n, p) => n + micros(p.spend_usd), 0),
        query,
      ).to.equal(recorded);
    }
    const activity = await admin.get(`/api/v1/activity?workspace_id=${key.workspaceId}`);
    expectStatus(activity, 200);
    const today = Math.floor(Date.now() / 86_400_000) * 86_400_000;
    const past = found.filter((r) => Date.parse(r.created_at) < today);
    const rows = activity.body.data as { requests: number; usage: number }[];
    expect(rows.reduce((n, a) => n + a.requests, 0)).to.equal(past.length);
    expect(rows.reduce((n, a) => n + micros(a.usage), 0)).to.equal(
      past.reduce((n, r) => n + micros(r.cost_usd), 0),
    );
  });
});
