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
  return WorkerPool.start<FlakyJob, FlakyResult, string>({
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
  const pools: WorkerPool<FlakyJob, FlakyResult, string>[] = [];
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

  it("hands over a job's chunks in order, before its result", async () => {
    const subject = await pool();
    const events: string[] = [];
    const result = await subject.run(
      { kind: "chunks", count: 3, value: "x" },
      { onChunk: (chunk) => events.push(chunk as unknown as string) },
    );
    events.push(result.value);
    expect(events).to.deep.equal(["x-0", "x-1", "x-2", "x-done"]);
  });

  it("tells a cancelled running job to stop, so its worker is free again without a restart", async () => {
    const subject = await pool({ jobTimeoutMs: 2_000 });
    const before = await subject.run({ kind: "echo", value: "before" });
    const controller = new AbortController();
    const spinning = rejection(subject.run({ kind: "spin" }, { signal: controller.signal }));
    const next = subject.run({ kind: "echo", value: "next" });
    controller.abort();
    expect(((await spinning) as Error).name).to.equal("AbortError");
    // Had the job not stopped, it would have timed out and its worker been replaced.
    expect((await next).threadId).to.equal(before.threadId);
  });

  describe("leases", () => {
    it("run every job of a lease on its worker, which keeps state between them", async () => {
      const subject = await pool({ size: 2 });
      const lease = await subject.lease();
      const stored = await subject.run({ kind: "remember", key: "k", value: "v" }, { lease });
      const recalled = await Promise.all(
        Array.from({ length: 6 }, () => subject.run({ kind: "recall", key: "k" }, { lease })),
      );
      for (const result of recalled) {
        expect(result).to.deep.equal({ threadId: stored.threadId, value: "v" });
      }
      lease.release({ kind: "forget", key: "k" });
    });

    it("spread over the workers, the least leased first", async () => {
      const subject = await pool({ size: 2 });
      const leases = [await subject.lease(), await subject.lease()];
      const threads = await Promise.all(
        leases.map((lease) => subject.run({ kind: "echo", value: "" }, { lease })),
      );
      expect(threads[0].threadId).to.not.equal(threads[1].threadId);
      for (const lease of leases) lease.release();
    });

    it("are capped per worker: the next caller waits until one is released", async () => {
      const subject = await pool({ maxLeasesPerWorker: 1 });
      const first = await subject.lease();
      let granted = false;
      const second = subject.lease().then((lease) => {
        granted = true;
        return lease;
      });
      await subject.run({ kind: "sleep", ms: 50, value: "" }, { lease: first });
      expect(granted).to.equal(false);
      first.release();
      const lease = await second;
      expect(granted).to.equal(true);
      expect((await subject.run({ kind: "echo", value: "ok" }, { lease })).value).to.equal("ok");
      lease.release();
    });

    it("stop waiting for a lease when the caller's signal aborts", async () => {
      const subject = await pool({ maxLeasesPerWorker: 1 });
      const held = await subject.lease();
      const controller = new AbortController();
      const waiting = rejection(subject.lease(controller.signal));
      controller.abort();
      expect(((await waiting) as Error).name).to.equal("AbortError");
      held.release();
      (await subject.lease()).release();
    });

    it("deliver the release notice after the job the worker is running", async () => {
      const subject = await pool();
      const lease = await subject.lease();
      await subject.run({ kind: "remember", key: "gone", value: "v" }, { lease });
      const running = subject.run({ kind: "sleep", ms: 100, value: "" }, { lease });
      lease.release({ kind: "forget", key: "gone" });
      await running;
      expect((await subject.run({ kind: "recall", key: "gone" })).value).to.equal("");
      expect(
        ((await rejection(subject.run({ kind: "echo", value: "" }, { lease }))) as Error).message,
      ).to.equal("the lease was released");
    });

    it("die with their worker: its jobs fail, and the replacement grants new leases", async () => {
      const subject = await pool({ maxLeasesPerWorker: 1 });
      const lease = await subject.lease();
      const busy = subject.run({ kind: "sleep", ms: 100, value: "" }, { lease });
      const queued = rejection(
        subject.run({ kind: "echo", value: "" }, { lease, priority: "low" }),
      );
      const crash = rejection(subject.run({ kind: "exit" }, { lease }));
      await busy;
      expect(await crash).to.be.instanceOf(WorkerCrashedError);
      expect(await queued).to.be.instanceOf(WorkerCrashedError);
      expect(await rejection(subject.run({ kind: "echo", value: "" }, { lease }))).to.be.instanceOf(
        WorkerCrashedError,
      );
      const fresh = await subject.lease();
      expect((await subject.run({ kind: "echo", value: "ok" }, { lease: fresh })).value).to.equal(
        "ok",
      );
      fresh.release();
    });
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
