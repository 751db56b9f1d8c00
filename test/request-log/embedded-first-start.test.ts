import { execFile } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { templatePath } from "../../store/request-log/data-dir-template.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { embeddedDatabase } from "../../store/request-log/embedded-database.js";
import { EMBEDDED_SHARED_BUFFERS } from "../../store/request-log/pglite-options.js";
import { makeTempDir, removeTempDir } from "../kit/processes.js";

const MB = 1024 * 1024;

async function sharedBuffers(db: SqlDatabase): Promise<unknown> {
  return (await db.query<{ shared_buffers: string }>("SHOW shared_buffers"))[0]?.shared_buffers;
}

/**
 * The peak RSS (VmHWM) of a fresh Node process that opens a new embedded database the way
 * Railgate does, in MB.
 */
async function firstStartPeakMb(options: { fromTemplate: boolean }): Promise<number> {
  const dir = makeTempDir("railgate-first-start-");
  try {
    const module = new URL("../../store/request-log/embedded-database.js", import.meta.url).href;
    const script = `
      import { readFileSync } from "node:fs";
      import { embeddedDatabase } from ${JSON.stringify(module)};
      const db = await embeddedDatabase(${JSON.stringify(join(dir, "pglite"))}, ${JSON.stringify(options)});
      await db.exec("CREATE TABLE t (x int)");
      await db.close();
      const kb = /VmHWM:\\s+(\\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1];
      process.stdout.write(String(Number(kb) / 1024));`;
    // A file, not --eval: initdb's worker thread would inherit --input-type, and refuse it.
    const file = join(dir, "first-start.mjs");
    writeFileSync(file, script);
    const { stdout } = await promisify(execFile)(process.execPath, [file]);
    return Number(stdout.trim());
  } finally {
    removeTempDir(dir);
  }
}

/**
 * What a newly opened folder must do: hold a database (PG_VERSION), take a write, run at the
 * small buffer pool, and, closed and opened again, still hold what was written.
 */
async function worksAndReopens(db: SqlDatabase, folder: string): Promise<void> {
  try {
    expect(existsSync(join(folder, "PG_VERSION"))).to.equal(true);
    await db.exec("CREATE TABLE t (x int); INSERT INTO t VALUES (7)");
    expect(await db.query("SELECT x FROM t")).to.deep.equal([{ x: 7 }]);
    expect(await sharedBuffers(db), "PostgreSQL's shared_buffers").to.equal(
      EMBEDDED_SHARED_BUFFERS,
    );
  } finally {
    await db.close();
  }
  // The folder is opened directly from then on, with what was written.
  const again = await embeddedDatabase(folder);
  try {
    expect(await again.query("SELECT x FROM t")).to.deep.equal([{ x: 7 }]);
    expect(await sharedBuffers(again)).to.equal(EMBEDDED_SHARED_BUFFERS);
  } finally {
    await again.close();
  }
}

describe("embedded database: a new folder is initialized apart (so its memory does not stay in the process)", () => {
  it("a first start loads the build's template instead of running initdb: its peak RSS is initdb's less ~500 MB", async function () {
    this.timeout(120_000);
    expect(existsSync(templatePath()), "the build's template").to.equal(true);
    const fromTemplate = await firstStartPeakMb({ fromTemplate: true });
    const initdb = await firstStartPeakMb({ fromTemplate: false });
    console.log(
      `      first start's peak RSS: ${fromTemplate.toFixed(0)} MB from the template, ${initdb.toFixed(0)} MB with initdb`,
    );
    // Measured: ~345 against ~790 MB (the template's worker thread, or initdb's three
    // WebAssembly instances, which cannot be smaller).
    expect(fromTemplate).to.be.lessThan(450);
    expect(initdb - fromTemplate).to.be.greaterThan(250);
  });

  it("opening a new folder from the template: none of the template's memory stays in this process, and the database works, at the small buffer pool, and reopens", async function () {
    this.timeout(120_000);
    const dir = makeTempDir("railgate-first-start-");
    try {
      const folder = join(dir, "pglite");
      const before = process.memoryUsage().arrayBuffers;
      const db = await embeddedDatabase(folder);
      // Loaded in this process, the template's tar and its extraction stayed: ~93 MB of
      // ArrayBuffers, and a system's idle RSS ~50 MB above; loaded in a worker, ~8 MB.
      const kept = (process.memoryUsage().arrayBuffers - before) / MB;
      await worksAndReopens(db, folder);
      expect(kept, "MB of ArrayBuffers kept by the first start").to.be.lessThan(48);
    } finally {
      removeTempDir(dir);
    }
  });

  it("without a template, initdb runs in a worker: none of its memory stays in this process, and the database works", async function () {
    this.timeout(120_000);
    const dir = makeTempDir("railgate-first-start-");
    try {
      const folder = join(dir, "pglite");
      const before = process.memoryUsage().arrayBuffers;
      const db = await embeddedDatabase(folder, { fromTemplate: false });
      // PGlite.create on a new folder in this process leaves ~225 MB of ArrayBuffers (initdb's
      // instance); initialized in a worker that has exited, ~8 MB.
      const kept = (process.memoryUsage().arrayBuffers - before) / MB;
      await worksAndReopens(db, folder);
      expect(kept, "MB of ArrayBuffers kept by the first start").to.be.lessThan(64);
    } finally {
      removeTempDir(dir);
    }
  });

  it("in memory (no folder), the database runs with the same small buffer pool", async function () {
    this.timeout(60_000);
    const db = await embeddedDatabase(undefined);
    try {
      // PGlite's default, PostgreSQL's 128MB, would be most of its idle RSS.
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
