import { expect } from "chai";
import { registry } from "../../platform/observability/metrics.js";
import { BatchWriter } from "../../store/request-log/batch-writer.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { onBothDatabases } from "../kit/databases.js";
import { pollUntil } from "../kit/poll.js";

interface Row {
  id: string;
  n: number;
}

/** The idempotent write every log writer does: a multi-row INSERT ... ON CONFLICT DO NOTHING. */
function insertRows(db: SqlDatabase, table: string) {
  return async (batch: Row[]) => {
    const params: unknown[] = [];
    const values = batch.map((r, i) => {
      params.push(r.id, r.n);
      return `($${2 * i + 1}, $${2 * i + 2})`;
    });
    await db.query(
      `INSERT INTO ${table} (id, n) VALUES ${values.join(", ")} ON CONFLICT (id) DO NOTHING`,
      params,
    );
  };
}

const count = async (db: SqlDatabase, table: string) =>
  ((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0] as { n: number })
    .n;

onBothDatabases("BatchWriter: batched, bounded, retried, idempotent", (getDb) => {
  let table = 0;
  const freshTable = async () => {
    const name = `bw${++table}`;
    await getDb().exec(`CREATE TABLE ${name} (id text PRIMARY KEY, n int NOT NULL)`);
    return name;
  };

  it("writes what add() queued in batches of at most maxBatch, without anyone flushing", async () => {
    const t = await freshTable();
    const sizes: number[] = [];
    const write = insertRows(getDb(), t);
    const w = new BatchWriter<Row>({
      name: "test",
      maxBatch: 40,
      write: async (b) => {
        sizes.push(b.length);
        await write(b);
      },
    });
    for (let i = 0; i < 100; i++) w.add({ id: `r${i}`, n: i });
    expect(
      await pollUntil(
        () => count(getDb(), t),
        (n) => n === 100,
      ),
    ).to.equal(100);
    expect(Math.max(...sizes)).to.be.at.most(40);
    expect(sizes.reduce((a, b) => a + b, 0)).to.equal(100);
    expect(w.stats).to.deep.include({ written: 100, dropped: 0, queued: 0 });
    await w.close();
  });

  it("shows queued and in-flight items as pending until written (read-your-writes)", async () => {
    const t = await freshTable();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const write = insertRows(getDb(), t);
    const w = new BatchWriter<Row>({
      name: "test",
      maxDelayMs: 1,
      write: async (b) => {
        await gate;
        await write(b);
      },
    });
    w.add({ id: "a", n: 1 });
    await pollUntil(
      async () => w.stats.queued,
      (q) => q === 1,
    );
    expect(w.pending().map((r) => r.id)).to.deep.equal(["a"]);
    w.add({ id: "b", n: 2 });
    expect(w.pending().map((r) => r.id)).to.deep.equal(["a", "b"]);
    release();
    await w.flush();
    expect(w.pending()).to.deep.equal([]);
    expect(await count(getDb(), t)).to.equal(2);
    await w.close();
  });

  it("drops beyond queueLimit and counts it (stats and metrics); add() never throws", async () => {
    const t = await freshTable();
    const metric = async (result: string) => {
      const text = await registry.getSingleMetricAsString("railgate_log_records_total");
      const m = new RegExp(`writer="bounded",result="${result}"} (\\d+)`).exec(text);
      return Number(m?.[1] ?? 0);
    };
    const before = { written: await metric("written"), dropped: await metric("dropped") };
    const w = new BatchWriter<Row>({
      name: "bounded",
      queueLimit: 10,
      maxDelayMs: 10_000,
      write: insertRows(getDb(), t),
    });
    for (let i = 0; i < 25; i++) w.add({ id: `r${i}`, n: i });
    expect(w.stats.dropped).to.equal(15);
    expect(await registry.getSingleMetricAsString("railgate_log_queue_depth")).to.include(
      'writer="bounded"} 10',
    );
    await w.flush();
    expect(await count(getDb(), t)).to.equal(10);
    await w.close();
    w.add({ id: "late", n: 0 });
    expect(w.stats.dropped).to.equal(16);
    expect((await metric("written")) - before.written).to.equal(10);
    expect((await metric("dropped")) - before.dropped).to.equal(16);
  });

  it("retries while the table is missing (the database refusing), and applies once it is back", async () => {
    const t = `bw${++table}`;
    const w = new BatchWriter<Row>({
      name: "test",
      maxDelayMs: 1,
      retryBaseMs: 20,
      maxAttempts: 1_000,
      write: insertRows(getDb(), t),
    });
    w.add({ id: "x", n: 1 });
    const err = await w.flush().catch((e: unknown) => e);
    expect(String(err)).to.match(/does not exist/);
    expect(w.pending().map((r) => r.id)).to.deep.equal(["x"]);
    await getDb().exec(`CREATE TABLE ${t} (id text PRIMARY KEY, n int NOT NULL)`);
    expect(
      await pollUntil(
        () => count(getDb(), t),
        (n) => n === 1,
      ),
    ).to.equal(1);
    expect(w.stats.failures).to.be.at.least(1);
    await w.close();
  });

  it("drops a batch the database keeps refusing for a non-transient reason after maxAttempts", async () => {
    const t = await freshTable();
    const w = new BatchWriter<Row>({
      name: "test",
      maxDelayMs: 1,
      retryBaseMs: 1,
      maxAttempts: 3,
      // n is NOT NULL: a permanent refusal (SQLSTATE 23502).
      write: insertRows(getDb(), t),
    });
    w.add({ id: "bad", n: null as unknown as number });
    await pollUntil(
      async () => w.stats.dropped,
      (d) => d === 1,
    );
    expect(w.stats).to.deep.include({ dropped: 1, failures: 3, queued: 0 });
    w.add({ id: "good", n: 1 });
    await w.flush();
    expect(await count(getDb(), t)).to.equal(1);
    await w.close();
  });

  it("writing the same items twice leaves one row each (idempotent by id)", async () => {
    const t = await freshTable();
    const w = new BatchWriter<Row>({ name: "test", write: insertRows(getDb(), t) });
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 5; i++) w.add({ id: `r${i}`, n: i });
      await w.flush();
    }
    expect(await count(getDb(), t)).to.equal(5);
    await w.close();
  });

  it("written() writes what was queued at the call, without waiting for what arrives after it", async () => {
    const t = await freshTable();
    const write = insertRows(getDb(), t);
    const batches: string[][] = [];
    let w: BatchWriter<Row> | undefined;
    let fed = 0;
    w = new BatchWriter<Row>({
      name: "test",
      maxBatch: 3,
      maxDelayMs: 60_000,
      write: async (b) => {
        batches.push(b.map((r) => r.id));
        await write(b);
        // Steady traffic: every write sees new records arrive (a 100 in all), so an empty queue
        // (what flush() waits for) comes only after all of them.
        if (fed < 100) for (let i = 0; i < 3; i++, fed++) w?.add({ id: `late${fed}`, n: fed });
      },
    });
    for (let i = 0; i < 5; i++) w.add({ id: `r${i}`, n: i });
    await w.written();
    // Read at the return: the writer goes on writing the late records while the test queries.
    const batchesAtReturn = batches.length;
    const fedAtReturn = fed;
    const ids = (await getDb().query<{ id: string }>(`SELECT id FROM ${t}`)).map((r) => r.id);
    for (let i = 0; i < 5; i++) expect(ids).to.include(`r${i}`);
    // Two batches hold the five ([r0 r1 r2], [r3 r4 late0]); written() came back when the second
    // was stored, with at most the third begun, long before the late ones were all written.
    expect(batches.slice(0, 2)).to.deep.equal([
      ["r0", "r1", "r2"],
      ["r3", "r4", "late0"],
    ]);
    expect(batchesAtReturn).to.be.at.most(3);
    expect(fedAtReturn).to.be.at.most(6);
    await w.close();
  });

  it("written() rejects with the database's error and keeps the items queued for the retries", async () => {
    const t = `bw${++table}`;
    const w = new BatchWriter<Row>({
      name: "test",
      maxDelayMs: 1,
      retryBaseMs: 20,
      maxAttempts: 1_000,
      write: insertRows(getDb(), t),
    });
    w.add({ id: "x", n: 1 });
    const err = await w.written().catch((e: unknown) => e);
    expect(String(err)).to.match(/does not exist/);
    expect(w.pending().map((r) => r.id)).to.deep.equal(["x"]);
    await getDb().exec(`CREATE TABLE ${t} (id text PRIMARY KEY, n int NOT NULL)`);
    await w.written().catch(() => undefined);
    expect(
      await pollUntil(
        () => count(getDb(), t),
        (n) => n === 1,
      ),
    ).to.equal(1);
    await w.close();
  });

  it("written() with nothing queued answers at once", async () => {
    const t = await freshTable();
    const w = new BatchWriter<Row>({ name: "test", write: insertRows(getDb(), t) });
    await w.written();
    expect(w.stats).to.deep.include({ written: 0, queued: 0 });
    await w.close();
  });

  it("close() drains what is queued", async () => {
    const t = await freshTable();
    const w = new BatchWriter<Row>({
      name: "test",
      maxDelayMs: 60_000,
      write: insertRows(getDb(), t),
    });
    for (let i = 0; i < 7; i++) w.add({ id: `r${i}`, n: i });
    await w.close();
    expect(await count(getDb(), t)).to.equal(7);
  });
});
