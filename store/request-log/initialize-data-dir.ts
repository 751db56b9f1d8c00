/**
 * Worker thread: creates a PGlite data folder and exits, from the build's template when there
 * is one (data-dir-template.ts), else by initdb. Either way PGlite's WebAssembly memory grows to
 * hold the work (initdb's instances; the template's tar and its extraction, ~100 MB more than a
 * later start holds), and a WebAssembly memory never shrinks: the process kept it for its
 * whole life (bench/HISTORY.md, issue 21 fourth part). A worker's memory goes with it.
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
