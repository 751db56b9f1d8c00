import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { pgliteOptions } from "./pglite-options.js";

/**
 * A new embedded database starts from a data folder made once, at build time, by the installed
 * PGlite: PGlite's initdb peaks at 750-790 MB of RSS (three WebAssembly instances) and takes
 * ~2.5 s, where loading this folder (PGlite's `loadDataDir`, in the worker thread of
 * initialize-data-dir.ts) peaks at 330-350 MB and takes ~0.9 s (bench/HISTORY.md;
 * docs/benchmarks.md for the worker). A running system's first start no longer
 * needs the memory a later start never uses: the build pays it once, in a process of its own
 * (an image, in its build stage). The file is named for the PGlite version that made it:
 * another version's folder is never loaded, and without one for this version a new folder is
 * initialized by initdb, in the same worker thread.
 */
function pgliteVersion(): string {
  // The package's exports do not include package.json: it sits beside dist/.
  const manifest = new URL("../package.json", import.meta.resolve("@electric-sql/pglite"));
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

/** Where the build puts the template: beside this module, in dist/. */
export function templatePath(): string {
  return fileURLToPath(new URL(`./pglite-template-${pgliteVersion()}.tar.gz`, import.meta.url));
}

/** The template for the installed PGlite, if the build made one. */
export function readTemplate(): Blob | undefined {
  const path = templatePath();
  if (!existsSync(path)) return undefined;
  return new Blob([readFileSync(path)]);
}

/**
 * Makes the template unless it exists: initdb in memory, then PGlite's own tar of the folder.
 * Written under a temporary name and renamed, so a build cut short leaves no half a file.
 * Returns the path, and whether it was made now.
 */
export async function makeTemplate(): Promise<{ path: string; made: boolean }> {
  const path = templatePath();
  if (existsSync(path)) return { path, made: false };
  const db = await PGlite.create(pgliteOptions(undefined));
  try {
    const tar = await db.dumpDataDir("gzip");
    const partial = `${path}.${process.pid}.partial`;
    try {
      writeFileSync(partial, Buffer.from(await tar.arrayBuffer()));
      renameSync(partial, path);
    } finally {
      rmSync(partial, { force: true });
    }
  } finally {
    await db.close();
  }
  return { path, made: true };
}
