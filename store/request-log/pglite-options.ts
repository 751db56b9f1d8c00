import { PGlite, type PGliteOptions } from "@electric-sql/pglite";

/**
 * PostgreSQL's shared buffer pool inside the embedded PGlite. PGlite keeps PostgreSQL's default
 * of 128 MB, and its WebAssembly memory touches all of it: that was the largest part of
 * `npm start`'s idle RSS after the engine workers (docs/operations.md "Request log"). The data files sit in
 * the host's file system, so pages that leave this pool are still read from the kernel's page
 * cache, not from disk. With 1,000,000 records the request log's list pages stay under their
 * target (`BENCH_ONLY=request-log npm run bench`).
 */
export const EMBEDDED_SHARED_BUFFERS = "16MB";

/**
 * PGlite's options for a data folder (undefined: in memory), for opening it and for the worker
 * that creates it: the same server settings in both, so initdb's helper instance is as small.
 */
export function pgliteOptions(dataDir: string | undefined): PGliteOptions {
  return {
    ...(dataDir === undefined ? {} : { dataDir }),
    // PGlite's own start parameters are replaced, not extended, by `startParams`: keep them.
    startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`],
  };
}
