import { expect } from "chai";
import { pino } from "pino";
import {
  JobTimeoutError,
  WorkerCrashedError,
  WorkerJobError,
} from "../../../services/speech/engines/espeak/errors.js";
import {
  WorkerPool,
  type WorkerPoolOptions,
} from "../../../services/speech/engines/espeak/worker-pool.js";
import type { FlakyJob, FlakyResult } from "./fixtures/flaky-worker.js";

const flakyWorker = new URL("./fixtures/flaky-worker.js", import.meta.url);

function startPool(options: Partial<WorkerPoolOptions> = {}) {
  return WorkerPool.start<FlakyJob, FlakyResult>({
    url: flakyWorker,
    size: 1,
    jobTimeoutMs: 10_000,
    logger: pino({ level: "silent" }),
    ...options,
  });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

describe("WorkerPool", () => {
  const pools: WorkerPool<FlakyJob, FlakyResult>[] = [];
  async function pool(options: Partial<WorkerPoolOptions> = {}) {
    const started = await startPool(options);
    pools.push(started);
    return started;
  }

  after(async () => {
    await Promise.all(pools.map((started) => started.close()));
  });

  it("runs jobs on every worker", async () => {
    const subject = await pool({ size: 2 });
    const results = await Promise.all(
      ["a", "b", "c", "d"].map((value) => subject.run({ kind: "sleep", ms: 50, value })),
    );
    expect(results.map((result) => result.value)).to.deep.equal(["a", "b", "c", "d"]);
    expect(new Set(results.map((result) => result.threadId)).size).to.equal(2);
  });

  it("rejects the job of a worker that exits, and replaces the worker", async () => {
    const subject = await pool();
    const before = await subject.run({ kind: "echo", value: "before" });
    const error = await rejection(subject.run({ kind: "exit" }));
    expect(error).to.be.instanceOf(WorkerCrashedError);
    const after = await subject.run({ kind: "echo", value: "after" });
    expect(after.value).to.equal("after");
    expect(after.threadId).to.not.equal(before.threadId);
  });

  it("replaces a worker whose job threw, since its state can no longer be trusted", async () => {
    const subject = await pool();
    const before = await subject.run({ kind: "echo", value: "before" });
    const error = await rejection(subject.run({ kind: "throw" }));
    expect(error).to.be.instanceOf(WorkerJobError);
    expect((error as WorkerJobError).remoteName).to.equal("Error");
    expect((error as WorkerJobError).message).to.equal("boom");
    const after = await subject.run({ kind: "echo", value: "after" });
    expect(after.threadId).to.not.equal(before.threadId);
  });

  it("keeps a worker that only rejected bad input", async () => {
    const subject = await pool();
    const before = await subject.run({ kind: "echo", value: "before" });
    const error = await rejection(subject.run({ kind: "bad-input" }));
    expect(error).to.be.instanceOf(WorkerJobError);
    expect((error as WorkerJobError).remoteName).to.equal("JobInputError");
    const after = await subject.run({ kind: "echo", value: "after" });
    expect(after.threadId).to.equal(before.threadId);
  });

  it("times out a hung job, replaces its worker and serves the jobs queued behind it", async () => {
    const subject = await pool({ jobTimeoutMs: 300 });
    const hung = subject.run({ kind: "hang" });
    const queued = subject.run({ kind: "echo", value: "queued" });
    expect(await rejection(hung)).to.be.instanceOf(JobTimeoutError);
    expect((await queued).value).to.equal("queued");
  });

  it("drops a queued job when its signal aborts", async () => {
    const subject = await pool();
    const running = subject.run({ kind: "sleep", ms: 200, value: "running" });
    const controller = new AbortController();
    const queued = subject.run({ kind: "echo", value: "queued" }, { signal: controller.signal });
    controller.abort();
    const error = await rejection(queued);
    expect((error as Error).name).to.equal("AbortError");
    expect((await running).value).to.equal("running");
  });

  it("rejects a running job as soon as its signal aborts, and stays usable", async () => {
    const subject = await pool();
    const controller = new AbortController();
    const events: string[] = [];
    const running = subject
      .run({ kind: "sleep", ms: 300, value: "running" }, { signal: controller.signal })
      .then(
        () => events.push("resolved"),
        (error: Error) => events.push(`rejected:${error.name}`),
      );
    const next = subject.run({ kind: "echo", value: "next" }).then(() => events.push("next"));
    controller.abort();
    await Promise.all([running, next]);
    expect(events).to.deep.equal(["rejected:AbortError", "next"]);
  });

  it("dispatches high-priority jobs before queued low-priority ones", async () => {
    const subject = await pool();
    const order: string[] = [];
    const track = (job: Promise<FlakyResult>) => job.then((result) => order.push(result.value));
    await Promise.all([
      track(subject.run({ kind: "sleep", ms: 100, value: "running" })),
      track(subject.run({ kind: "echo", value: "low" }, { priority: "low" })),
      track(subject.run({ kind: "echo", value: "high" }, { priority: "high" })),
    ]);
    expect(order).to.deep.equal(["running", "high", "low"]);
  });

  it("rejects queued and running jobs on close", async () => {
    const subject = await startPool();
    const running = rejection(subject.run({ kind: "sleep", ms: 300, value: "running" }));
    const queued = rejection(subject.run({ kind: "echo", value: "queued" }));
    await subject.close();
    expect(await running).to.have.property("message", "worker pool is closed");
    expect(await queued).to.have.property("message", "worker pool is closed");
    expect(
      (await rejection(subject.run({ kind: "echo", value: "late" }))) as Error,
    ).to.have.property("message", "worker pool is closed");
  });

  it("fails to start when a worker's setup fails", async () => {
    const error = await rejection(
      WorkerPool.start({
        url: new URL("./fixtures/failing-setup-worker.js", import.meta.url),
        size: 2,
        jobTimeoutMs: 1000,
        logger: pino({ level: "silent" }),
      }),
    );
    expect(error).to.be.instanceOf(WorkerCrashedError);
    expect((error as WorkerCrashedError).cause).to.have.property("message", "setup failed");
  });
});
