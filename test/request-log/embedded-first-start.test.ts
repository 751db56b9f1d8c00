import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { embeddedDatabase } from "../../store/request-log/embedded-database.js";
import { EMBEDDED_SHARED_BUFFERS } from "../../store/request-log/pglite-options.js";
import { makeTempDir, removeTempDir } from "../kit/processes.js";

const MB = 1024 * 1024;

async function sharedBuffers(db: SqlDatabase): Promise<unknown> {
  return (await db.query<{ shared_buffers: string }>("SHOW shared_buffers"))[0]?.shared_buffers;
}

describe("embedded database: a new folder is initialized apart (issue 21: idle RSS)", () => {
  it("opening a new folder keeps none of initdb's memory in this process, and the database works", async function () {
    this.timeout(120_000);
    const dir = makeTempDir("railgate-first-start-");
    try {
      const before = process.memoryUsage().arrayBuffers;
      const db = await embeddedDatabase(join(dir, "pglite"));
      try {
        // PGlite.create on a new folder in this process leaves ~225 MB of ArrayBuffers (initdb's
        // instance); initialized in a worker that has exited, ~8 MB.
        const kept = (process.memoryUsage().arrayBuffers - before) / MB;
        expect(kept, "MB of ArrayBuffers kept by the first start").to.be.lessThan(64);
        expect(existsSync(join(dir, "pglite", "PG_VERSION"))).to.equal(true);
        await db.exec("CREATE TABLE t (x int); INSERT INTO t VALUES (7)");
        expect(await db.query("SELECT x FROM t")).to.deep.equal([{ x: 7 }]);
        expect(await sharedBuffers(db), "PostgreSQL's shared_buffers").to.equal(
          EMBEDDED_SHARED_BUFFERS,
        );
      } finally {
        await db.close();
      }
      // The folder is opened directly from then on, with what was written.
      const again = await embeddedDatabase(join(dir, "pglite"));
      try {
        expect(await again.query("SELECT x FROM t")).to.deep.equal([{ x: 7 }]);
        expect(await sharedBuffers(again)).to.equal(EMBEDDED_SHARED_BUFFERS);
      } finally {
        await again.close();
      }
    } finally {
      removeTempDir(dir);
    }
  });

  it("in memory (no folder), the database runs with the same small buffer pool", async function () {
    this.timeout(60_000);
    const db = await embeddedDatabase(undefined);
    try {
      // PGlite's default, PostgreSQL's 128MB, was most of its RSS: issue 21's idle memory.
      expect(EMBEDDED_SHARED_BUFFERS).to.not.equal("128MB");
      expect(await sharedBuffers(db)).to.equal(EMBEDDED_SHARED_BUFFERS);
    } finally {
      await db.close();
    }
  });

  it("a folder that cannot be created fails start-up with its path, instead of hanging", async function () {
    this.timeout(60_000);
    const dir = makeTempDir("railgate-first-start-");
    try {
      const file = join(dir, "a-file");
      writeFileSync(file, "not a folder");
      const err = await embeddedDatabase(join(file, "pglite")).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(Error);
      expect((err as Error).message).to.include(`initializing the embedded database in ${file}`);
    } finally {
      removeTempDir(dir);
    }
  });
});
