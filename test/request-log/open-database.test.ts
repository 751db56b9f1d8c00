import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { setLogDestination } from "../../platform/observability/logger.js";
import { databaseLog, openDatabase } from "../../store/request-log/open-database.js";
import { createTestDatabase } from "../kit/databases.js";
import { makeTempDir, removeTempDir } from "../kit/processes.js";

/** Log lines written while `fn` runs (at every level: the announcement must not hide). */
async function capture<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const restore = setLogDestination({ write: (line: string) => void lines.push(JSON.parse(line)) });
  const level = databaseLog.level;
  databaseLog.level = "info";
  try {
    return { value: await fn(), lines };
  } finally {
    databaseLog.level = level;
    restore();
  }
}

describe("openDatabase: which store, where, why", () => {
  it("without DATABASE_URL: a file-backed PGlite under RAILGATE_DATA_DIR/pglite, announced, migrated, kept across restarts", async function () {
    this.timeout(120_000);
    const dir = makeTempDir("railgate-data-");
    try {
      const config = { dataDir: dir, databasePoolMax: 2 };
      // A lock left by a process that is gone does not keep the database shut.
      mkdirSync(join(dir, "pglite"), { recursive: true });
      writeFileSync(join(dir, "pglite", "railgate.lock"), "999999999");
      const first = await capture(() => openDatabase(config));
      const line = first.lines.find((l) => l.store === "embedded");
      expect(line).to.include({ where: join(dir, "pglite"), why: "DATABASE_URL is not set" });
      expect(existsSync(join(dir, "pglite", "PG_VERSION"))).to.equal(true);
      await first.value.exec("CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)");
      // A second open of the same folder (another process, or this one) would corrupt it.
      const second = await openDatabase(config).catch((e: unknown) => e);
      expect(String(second)).to.match(/in use by process \d+.*DATABASE_URL/);
      await first.value.close();
      const again = await openDatabase(config);
      try {
        expect(await again.query("SELECT x FROM kept")).to.deep.equal([{ x: 42 }]);
        // Migrated once: the reopen applied nothing again (one row per version).
        const versions = await again.query("SELECT version FROM schema_migrations");
        expect(versions.length).to.equal(new Set(versions.map((r) => r.version)).size);
      } finally {
        await again.close();
      }
    } finally {
      removeTempDir(dir);
    }
  });

  it("with DATABASE_URL: that server, announced with the password redacted, migrated", async () => {
    const t = await createTestDatabase("postgres", { migrate: false });
    try {
      const url = new URL(t.url as string);
      url.password = "s3cret-never-logged";
      // trust auth ignores the password: the point is that no log line carries it.
      const { value: db, lines } = await capture(() =>
        openDatabase({ databaseUrl: url.toString(), databasePoolMax: 2, dataDir: "/nonexistent" }),
      );
      try {
        expect(lines.find((l) => l.store === "postgres")).to.include({
          why: "DATABASE_URL is set",
        });
        expect(JSON.stringify(lines)).to.not.include("s3cret-never-logged");
        expect(db.kind).to.equal("postgres");
        const rows = await db.query("SELECT count(*)::int AS n FROM schema_migrations");
        expect(rows[0]?.n).to.be.greaterThan(0);
      } finally {
        await db.close();
      }
    } finally {
      await t.dispose();
    }
  });

  it("a server that does not answer refuses start-up (no silent fallback when DATABASE_URL is named)", async () => {
    const err = await openDatabase({
      databaseUrl: "postgres://postgres@127.0.0.1:1/none",
      databasePoolMax: 1,
      dataDir: "/nonexistent",
    }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Error);
  });
});
