import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { writeBenchCatalog } from "../../bench/system-process.js";
import { REGION_NAMES } from "../../domain/enums.js";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { expectStatus } from "../kit/expect.js";

import { FakeOpenAi } from "../kit/fake-openai.js";
import { Api } from "../kit/http.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { type HeldStream, holdSpeech, longInput } from "../kit/speech-stream.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";
import { startSystemProcess } from "../kit/system-process.js";

const micros = (usd: number) => Math.round(usd * 1_000_000);

/** Resolves true when a new TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.on("connect", () => {
      s.destroy();
      resolve(false);
    });
    s.on("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED"));
  });
}

/**
 * SIGTERM to the running system (`node dist/apps/all-in-one/main.js`, a child
 * process): it stops accepting at once, lets the speech streams in flight
 * finish within RAILGATE_SHUTDOWN_GRACE_MS, cuts the rest, and every stream is charged
 * exactly what its generation record says it delivered.
 */
describe("faults: SIGTERM drains the system", function () {
  this.timeout(180_000);
  let redis: ThrowawayRedis;
  let upstream: FakeOpenAi;
  let dir: string;
  let catalogFile: string;
  /** An in-process replica on the same Redis, to set up and to inspect after the child exits. */
  let inspector: RunningSystem;
  let admin: Api;
  let speaker: Api;
  let secret: string;
  let workspaceId: string;
  /** The request log both share, as replicas share one PostgreSQL. */
  let database: TestDatabase;

  const balance = async () =>
    micros((await admin.get(`/api/v1/workspaces/${workspaceId}/credits`)).body.data.balance_usd);
  const record = async (id: string) => {
    const res = await speaker.get(`/api/v1/generation?id=${id}`);
    expectStatus(res, 200);
    return res.body.data;
  };

  before(async function () {
    this.timeout(120_000);
    redis = await startRedis();
    // 20 s of audio in 20 pieces a quarter second apart: each stream lasts about 5 s.
    upstream = await new FakeOpenAi({ chunks: 20, chunkDelayMs: 250, secondsPerChar: 1 }).start();
    dir = mkdtempSync(join(tmpdir(), "railgate-drain-"));
    catalogFile = writeBenchCatalog(dir, Number(new URL(upstream.baseUrl).port));
    database = await createTestDatabase("postgres");
    inspector = await startTestSystem(redis.url, {}, { database: database.db });
    const base = `http://127.0.0.1:${inspector.gatewayPorts.global}`;
    admin = new Api(base, MANAGEMENT_KEY);
    const key = await admin.post("/api/v1/keys", { name: "drain" });
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
    await inspector?.close();
    await database?.dispose();
    await upstream?.close();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("refuses new connections, lets streams in flight finish, and charges them in full", async () => {
    const system = await startSystemProcess(redis.url, {
      RAILGATE_SPEECH_CATALOG_FILE: catalogFile,
      RAILGATE_SHUTDOWN_GRACE_MS: "30000",
      DATABASE_URL: database.url as string,
    });
    const before = await balance();
    const input = longInput(400);
    const streams: HeldStream[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        streams.push(
          await holdSpeech(system.baseUrl(), secret, {
            model: "bench/fixed-clip",
            voice: "alloy",
            input,
          }),
        );
      }
      system.child.process.kill("SIGTERM");
      await system.child.waitForLine(/draining/, 10_000);
      for (const region of REGION_NAMES) {
        expect(await refused(system.ports[region]), `${region} refuses new connections`).to.equal(
          true,
        );
      }
      const whole = await Promise.all(streams.map((s) => s.finish()));
      expect(whole).to.deep.equal([true, true]);
      expect(await system.exited).to.equal(0);
    } finally {
      await system.child.stop(2_000);
    }
    let charged = 0;
    for (const s of streams) {
      const g = await record(s.generationId);
      expect(g.status).to.equal("completed");
      // $1 per million characters, in full: the stream was delivered whole.
      expect(micros(g.cost_usd)).to.equal(input.length);
      charged += micros(g.cost_usd);
    }
    expect(await balance()).to.equal(before - charged);
  });

  it("cuts what outlives the grace period and charges only what each stream delivered", async () => {
    const system = await startSystemProcess(redis.url, {
      RAILGATE_SPEECH_CATALOG_FILE: catalogFile,
      RAILGATE_SHUTDOWN_GRACE_MS: "1500",
      DATABASE_URL: database.url as string,
    });
    const before = await balance();
    const input = longInput(10_000);
    const streams: HeldStream[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        // The embedded engine: the client reads nothing more, so the streams cannot finish.
        streams.push(
          await holdSpeech(system.baseUrl(), secret, {
            model: "railgate/espeak-ng",
            voice: "en-us",
            input,
          }),
        );
      }
      system.child.process.kill("SIGTERM");
      expect(await system.exited).to.equal(0);
      const whole = await Promise.all(streams.map((s) => s.finish()));
      expect(whole).to.deep.equal([false, false]);
    } finally {
      await system.child.stop(2_000);
    }
    let charged = 0;
    for (const s of streams) {
      const g = await record(s.generationId);
      expect(g.status).to.equal("cancelled");
      expect(g.duration_seconds).to.be.greaterThan(0);
      // Billed for the sentences delivered: some, but less than the 10,000 characters of input.
      expect(micros(g.cost_usd)).to.be.greaterThan(0).and.lessThan(input.length);
      charged += micros(g.cost_usd);
    }
    // The settlements replaced the whole-input reservations by exactly those amounts.
    expect(await balance()).to.equal(before - charged);
  });

  it("serves the first request of a connection it accepted before draining, then closes it", async () => {
    const system = await startSystemProcess(redis.url, {
      RAILGATE_SPEECH_CATALOG_FILE: catalogFile,
      RAILGATE_SHUTDOWN_GRACE_MS: "30000",
      DATABASE_URL: database.url as string,
    });
    try {
      // Accepted, as a TCP balancer's connection is, before the request is written; nothing
      // else in flight, so nothing else holds the drain open.
      const socket = connect(system.ports.global, "127.0.0.1");
      await once(socket, "connect");
      let answer = "";
      socket.setEncoding("utf8");
      socket.on("data", (c: string) => {
        answer += c;
      });
      socket.on("error", () => {});
      const socketClosed = once(socket, "close");
      system.child.process.kill("SIGTERM");
      await system.child.waitForLine(/draining/, 10_000);
      socket.write(
        `GET /api/v1/key HTTP/1.1\r\nhost: gateway\r\nauthorization: Bearer ${secret}\r\n\r\n`,
      );
      await socketClosed;
      // Before: the connection closed unanswered (nothing was in flight), or a 503 "this
      // instance is shutting down": either way a POST a balancer could not safely retry.
      expect(answer.split("\r\n")[0]).to.equal("HTTP/1.1 200 OK");
      expect(answer.toLowerCase()).to.include("connection: close");
      expect(await system.exited).to.equal(0);
    } finally {
      await system.child.stop(2_000);
    }
  });
});
