import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../gen/grpc/health/v1/health_pb.js";
import { LIVENESS_SERVICE } from "../../platform/rpc/health.js";
import { endpoint, model, provider, writeCatalogFile } from "../kit/catalog-entries.js";
import { expectStatus } from "../kit/expect.js";
import { FakeOpenAi } from "../kit/fake-openai.js";
import { Api, postSpeech } from "../kit/http.js";
import { pollUntil, sleep } from "../kit/poll.js";
import { makeTempDir } from "../kit/processes.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { type SplitSystem, startSplitSystem } from "../kit/split-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

const MODEL = "quick/tts";
/**
 * A speech request is issued this often whatever the earlier ones are doing (an open loop, as
 * independent clients arrive): requests keep landing on a frozen replica's connection until
 * the client leaves it, not only the few a closed loop would have stuck there.
 */
const EVERY_MS = 100;
/** The share of requests that must succeed once the client has had time to leave the replica. */
const REQUIRED = 0.99;

/** One speech request's outcome, by when it was issued (ms after the fault). */
interface Outcome {
  at: number;
  status: number;
}

/** What a liveness probe sees: grpc.health.v1 "liveness" of one process, within 2 s. */
async function liveness(port: number): Promise<string> {
  const client = createClient(Health, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
  try {
    const res = await client.check({ service: LIVENESS_SERVICE }, { timeoutMs: 2_000 });
    return Status[res.status];
  } catch (err) {
    return `failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/**
 * Two speech replicas behind one TCP balancer address (a Kubernetes Service), the gateway's
 * gRPC client in front with its default settings (ping every 10 s, 5 s timeout, 5 s connect
 * timeout, 2 connections per address). A replica that freezes (SIGSTOP) or dies (SIGKILL)
 * must cost only the requests already on it: the client leaves it within ping interval +
 * timeout, and the gateway stays ready through the live replica. Liveness (what restarts a
 * process) fails for a frozen process and holds through a Redis outage.
 */
describe("faults: a frozen or dead speech replica behind a balancer (split topology)", function () {
  this.timeout(300_000);
  let redis: ThrowawayRedis;
  let upstream: FakeOpenAi;
  let system: SplitSystem;
  let key: string;

  before(async () => {
    redis = await startRedis();
    upstream = await new FakeOpenAi().start();
    const catalog = writeCatalogFile(makeTempDir("rg-replica-freeze-"), {
      providers: { quick: provider(upstream.baseUrl, { timeout_ms: 30_000 }) },
      models: [
        model(MODEL, [endpoint("quick", { price: 1_000 })], {
          voices: ["alloy"],
          description: "A provider that answers at once",
        }),
      ],
    });
    system = await startSplitSystem(
      redis.url,
      { RAILGATE_SPEECH_CATALOG_FILE: catalog, RAILGATE_RATE_LIMIT_PER_MINUTE: "0" },
      { speechReplicas: 2 },
    );
    const admin = new Api(system.baseUrl(), MANAGEMENT_KEY);
    const created = await admin.post("/api/v1/keys", { name: "replicas" });
    expectStatus(created, 201);
    key = created.body.key;
    expectStatus(
      await admin.post(`/api/v1/workspaces/${created.body.data.workspace_id}/credits`, {
        amount_usd: 10_000,
      }),
      200,
    );
  });

  afterEach(() => {
    // A failed test must not leave a replica frozen for the next one.
    for (const s of system?.speeches ?? []) s.child.process.kill("SIGCONT");
  });

  after(async () => {
    await system?.stop();
    await upstream?.close();
    await redis?.stop();
  });

  const speak = async (): Promise<number> => {
    try {
      const res = await postSpeech(
        system.baseUrl(),
        key,
        { model: MODEL, voice: "alloy", input: "Hi there." },
        { signal: AbortSignal.timeout(30_000) },
      );
      return res.status;
    } catch {
      return 0;
    }
  };

  /** Speech requests every EVERY_MS for `ms`, and /healthz once a second meanwhile. */
  async function load(since: number, ms: number) {
    const outcomes: Outcome[] = [];
    const health: { at: number; status: number }[] = [];
    const until = since + ms;
    const requests: Promise<void>[] = [];
    const issuer = async () => {
      while (performance.now() < until) {
        const at = performance.now() - since;
        requests.push(
          speak().then((status) => {
            outcomes.push({ at, status });
          }),
        );
        await sleep(EVERY_MS);
      }
      await Promise.all(requests);
    };
    const prober = async () => {
      while (performance.now() < until) {
        const at = performance.now() - since;
        const res = await fetch(`${system.baseUrl()}/healthz`, {
          signal: AbortSignal.timeout(10_000),
        }).catch(() => undefined);
        await res?.arrayBuffer();
        health.push({ at, status: res?.status ?? 0 });
        await sleep(1_000);
      }
    };
    await Promise.all([issuer(), prober()]);
    return { outcomes, health };
  }

  /** The replica the gateway has a connection to (with one connection, the one it uses). */
  function inUse() {
    const balancer = system.speechBalancer;
    if (!balancer) throw new Error("no speech balancer");
    const used = system.speeches.filter((s) => balancer.openTo(s.port) > 0);
    expect(used.length, "the gateway holds a connection to a speech replica").to.be.greaterThan(0);
    return used[used.length - 1] as SplitSystem["speeches"][number];
  }

  function report(name: string, outcomes: Outcome[], fromMs: number) {
    const late = outcomes.filter((o) => o.at >= fromMs);
    const ok = late.filter((o) => o.status === 200).length;
    const statuses = [...new Set(outcomes.map((o) => o.status))].sort();
    const failed = outcomes.filter((o) => o.status !== 200);
    const last =
      failed.length > 0 ? `${(Math.max(...failed.map((o) => o.at)) / 1000).toFixed(1)} s` : "-";
    console.log(
      `      ${name}: ${outcomes.length} requests (statuses ${statuses.join(", ")}), ${failed.length} failed, the last issued at ${last}; from ${fromMs / 1000} s after: ${ok}/${late.length} succeeded`,
    );
    return { late, ok };
  }

  it("a frozen replica (SIGSTOP): from 15 s after, at least 99% of speech requests succeed; /healthz stays 200; the frozen one fails liveness, the rest pass", async () => {
    for (let i = 0; i < 10; i++) expect(await speak()).to.equal(200);
    const victim = inUse();
    const live = system.speeches.find((s) => s !== victim) as (typeof system.speeches)[number];
    victim.child.process.kill("SIGSTOP");
    const frozenAt = performance.now();
    const checks = (async () => {
      await sleep(3_000);
      const gatewayLive = await fetch(`${system.baseUrl()}/livez`);
      return {
        frozen: await liveness(victim.port),
        live: await liveness(live.port),
        guardrail: await liveness(system.guardrailPort),
        gateway: gatewayLive.status,
      };
    })();
    const { outcomes, health } = await load(frozenAt, 45_000);
    const { late, ok } = report("frozen replica", outcomes, 15_000);
    expect(late.length).to.be.greaterThan(30);
    expect(ok / late.length, "share of requests served from 15 s after the freeze").to.be.at.least(
      REQUIRED,
    );
    expect(
      health.filter((h) => h.status !== 200),
      "/healthz with one replica frozen",
    ).to.deep.equal([]);
    const seen = await checks;
    expect(seen.frozen).to.match(/^failed: /);
    expect(seen).to.deep.include({ live: "SERVING", guardrail: "SERVING", gateway: 200 });
  });

  it("a dead replica (SIGKILL): from 5 s after, at least 99% of speech requests succeed", async () => {
    // Both replicas run again (the frozen one was thawed); the client finds its way back.
    for (let i = 0; i < 10; i++) expect(await speak()).to.equal(200);
    const victim = inUse();
    victim.child.process.kill("SIGKILL");
    const killedAt = performance.now();
    const { outcomes, health } = await load(killedAt, 25_000);
    const { late, ok } = report("killed replica", outcomes, 5_000);
    expect(late.length).to.be.greaterThan(30);
    expect(ok / late.length, "share of requests served from 5 s after the kill").to.be.at.least(
      REQUIRED,
    );
    expect(
      health.filter((h) => h.at >= 5_000 && h.status !== 200),
      "/healthz from 5 s after",
    ).to.deep.equal([]);
  });

  it("liveness holds through a Redis outage while readiness (/healthz) fails", async () => {
    const survivor = system.speeches.find(
      (s) => s.child.process.exitCode === null && s.child.process.signalCode === null,
    );
    expect(survivor, "a speech replica still runs").to.not.equal(undefined);
    await redis.kill();
    const ready = await pollUntil(
      async () => (await fetch(`${system.baseUrl()}/healthz`)).status,
      (s) => s === 503,
    );
    expect(ready, "/healthz with Redis down").to.equal(503);
    expect((await fetch(`${system.baseUrl()}/livez`)).status).to.equal(200);
    expect(await liveness(system.guardrailPort)).to.equal("SERVING");
    expect(await liveness((survivor as (typeof system.speeches)[number]).port)).to.equal("SERVING");
  });
});
