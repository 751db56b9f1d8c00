import { expect } from "chai";
import { onBothDatabases } from "../kit/databases.js";

onBothDatabases("SqlDatabase: one SQL, the same values on PostgreSQL and PGlite", (getDb) => {
  before(async () => {
    await getDb().exec(
      "CREATE TABLE t (id text PRIMARY KEY, n bigint, amount numeric(20, 9), at timestamptz, day date, data bytea, doc jsonb, tags text[])",
    );
  });

  it("round-trips every column type with $n parameters into the same JavaScript values", async () => {
    const at = new Date("2026-11-26T07:30:00.123Z");
    await getDb().query("INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", [
      "a",
      9_007_199_254_740_000,
      "0.000001234",
      at,
      "2026-11-26",
      new Uint8Array([0, 1, 255]),
      { k: [1, "x"] },
      ["p", "q"],
    ]);
    const rows = await getDb().query("SELECT * FROM t WHERE id = $1", ["a"]);
    expect(rows).to.have.length(1);
    const row = rows[0] as Record<string, unknown>;
    expect(row.n).to.equal(9_007_199_254_740_000);
    expect(row.amount).to.equal("0.000001234");
    expect((row.at as Date).toISOString()).to.equal(at.toISOString());
    expect((row.day as Date).toISOString()).to.equal("2026-11-26T00:00:00.000Z");
    expect([...(row.data as Uint8Array)]).to.deep.equal([0, 1, 255]);
    expect(row.doc).to.deep.equal({ k: [1, "x"] });
    expect(row.tags).to.deep.equal(["p", "q"]);
  });

  it("commits a transaction, and rolls every statement back when it throws", async () => {
    await getDb().transaction(async (tx) => {
      await tx.query("INSERT INTO t (id) VALUES ($1)", ["kept"]);
    });
    const boom = new Error("boom");
    const err = await getDb()
      .transaction(async (tx) => {
        await tx.query("INSERT INTO t (id) VALUES ($1)", ["gone"]);
        // Nested: the same transaction, so the rollback covers it too.
        await tx.transaction((inner) => inner.query("INSERT INTO t (id) VALUES ($1)", ["gone2"]));
        throw boom;
      })
      .catch((e: unknown) => e);
    expect(err).to.equal(boom);
    const ids = (await getDb().query<{ id: string }>("SELECT id FROM t ORDER BY id")).map(
      (r) => r.id,
    );
    expect(ids).to.include("kept");
    expect(ids).to.not.include("gone");
    expect(ids).to.not.include("gone2");
  });

  it("keeps a query outside a transaction out of an open one (serialized on PGlite, pooled on PostgreSQL)", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const tx = getDb().transaction(async (t) => {
      await t.query("INSERT INTO t (id) VALUES ($1)", ["pending"]);
      await gate;
      throw new Error("rolled back");
    });
    // Another caller's read never sees the uncommitted row, whichever engine.
    const seen = getDb().query("SELECT id FROM t WHERE id = $1", ["pending"]);
    setTimeout(release, 20);
    await tx.catch(() => {});
    expect(await seen).to.deep.equal([]);
  });

  it("reports a SQL error with its SQLSTATE code", async () => {
    const err = (await getDb()
      .query("INSERT INTO t (id) VALUES ($1), ($1)", ["dup"])
      .catch((e: unknown) => e)) as { code?: string };
    expect(err.code).to.equal("23505");
  });
});
