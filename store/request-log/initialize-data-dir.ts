/**
 * Worker thread: creates a PGlite data folder (initdb) and exits. PGlite's first start on a
 * new folder runs initdb as a second WebAssembly instance whose memory the process kept
 * (~650 MB of RSS, bench/HISTORY.md, issue 21 fourth part); a worker's memory goes with it.
 */
import { workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { pgliteOptions } from "./pglite-options.js";

const { dataDir } = workerData as { dataDir: string };
const db = await PGlite.create(pgliteOptions(dataDir));
await db.close();
