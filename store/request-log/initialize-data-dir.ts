/**
 * Worker thread: creates a PGlite data folder and exits, from the build's template when there
 * is one (data-dir-template.ts), else by initdb. Either way PGlite keeps what it made the
 * folder with: initdb's WebAssembly instance (a WebAssembly memory never shrinks; ~650 MB of
 * RSS, bench/HISTORY.md), or the template's tar and extraction buffers
 * (~90 MB of ArrayBuffers). In the process they stayed for its whole life; a worker's memory
 * goes with it.
 */
import { workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { readTemplate } from "./data-dir-template.js";
import { pgliteOptions } from "./pglite-options.js";

const { dataDir, fromTemplate } = workerData as { dataDir: string; fromTemplate: boolean };
const options = pgliteOptions(dataDir);
const template = fromTemplate ? readTemplate() : undefined;
if (template !== undefined) options.loadDataDir = template;
const db = await PGlite.create(options);
await db.close();
