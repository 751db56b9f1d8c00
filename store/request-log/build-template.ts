/**
 * Build step (`npm run build`, the Dockerfile): makes the embedded database's data-folder
 * template for the installed PGlite (data-dir-template.ts), once per PGlite version. Its own
 * process: initdb's memory peak is a build's, never a running system's.
 */
import { makeTemplate } from "./data-dir-template.js";

const started = Date.now();
const { path, made } = await makeTemplate();
if (made)
  process.stdout.write(`embedded database template: ${path} (${Date.now() - started} ms)\n`);
