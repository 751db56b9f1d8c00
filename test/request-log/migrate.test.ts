import { expect } from "chai";
import { migrate } from "../../store/request-log/migrate.js";
import { MIGRATIONS } from "../../store/request-log/migrations/index.js";
import { postgresDatabase } from "../../store/request-log/postgres-database.js";
import { createTestDatabase, onBothDatabases } from "../kit/databases.js";

onBothDatabases(
  "migrations: versioned, once each, atomic",
  (getDb) => {
    it("applies every migration on an empty database and records each version", async () => {
      const applied = await migrate(getDb());
      expect(applied).to.deep.equal(MIGRATIONS.map((m) => m.version));
      const rows = await getDb().query<{ version: number; name: string }>(
        "SELECT version, name FROM schema_migrations ORDER BY version",
      );
      expect(rows.map((r) => r.version)).to.deep.equal(MIGRATIONS.map((m) => m.version));
      expect(await getDb().query("SELECT count(*)::int AS n FROM generations")).to.deep.equal([
        { n: 0 },
      ]);
    });

    it("applies nothing the second time", async () => {
      expect(await migrate(getDb())).to.deep.equal([]);
    });

    it("rolls a failing run back whole: no half-applied step, no version recorded", async () => {
      const extra = [
        ...MIGRATIONS,
        { version: 90, name: "ok-part", sql: "CREATE TABLE t90 (x int)" },
        { version: 91, name: "broken", sql: "CREATE TABLE t91 (x no_such_type)" },
      ];
      const err = await migrate(getDb(), extra).catch((e: unknown) => e);
      expect(String(err)).to.match(/no_such_type/);
      expect(await getDb().query("SELECT to_regclass('t90') AS t")).to.deep.equal([{ t: null }]);
      const versions = await getDb().query(
        "SELECT version FROM schema_migrations WHERE version >= 90",
      );
      expect(versions).to.deep.equal([]);
    });

    it("refuses a database migrated by a newer version it does not know", async () => {
      await getDb().query("INSERT INTO schema_migrations (version, name) VALUES (999, 'future')");
      const err = await migrate(getDb()).catch((e: unknown) => e);
      expect(String(err)).to.match(/does not know \(999\)/);
      await getDb().query("DELETE FROM schema_migrations WHERE version = 999");
    });

    it("refuses migrations listed out of order", async () => {
      const err = await migrate(getDb(), [
        { version: 2, name: "b", sql: "SELECT 1" },
        { version: 1, name: "a", sql: "SELECT 1" },
      ]).catch((e: unknown) => e);
      expect(String(err)).to.match(/out of order/);
    });
  },
  { migrate: false },
);

describe("migrations: replicas starting at once (real PostgreSQL)", () => {
  it("five concurrent migrate() calls on one database apply each migration exactly once", async function () {
    this.timeout(60_000);
    const t = await createTestDatabase("postgres", { migrate: false });
    try {
      // Separate pools: separate sessions, as separate processes would have.
      const pools = Array.from({ length: 5 }, () => postgresDatabase({ url: t.url as string }));
      const results = await Promise.all(pools.map((p) => migrate(p)));
      await Promise.all(pools.map((p) => p.close()));
      const all = results.flat().sort((a, b) => a - b);
      expect(all).to.deep.equal(MIGRATIONS.map((m) => m.version));
    } finally {
      await t.dispose();
    }
  });
});
