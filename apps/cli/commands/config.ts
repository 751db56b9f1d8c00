import { readFileSync, writeFileSync } from "node:fs";
import { MemoryStore } from "../../../store/memory-store.js";
import { openStore } from "../../../store/open-store.js";
import { openDatabase } from "../../../store/request-log/open-database.js";
import type { Store } from "../../../store/types.js";
import type { Command } from "../command.js";
import { str } from "../command.js";
import {
  ConfigFileRefused,
  checkConfigFile,
  exportConfig,
  importConfig,
} from "../config-transfer.js";
import { record } from "../output.js";
import { storeSettings } from "../settings.js";
import { UsageError } from "../usage-error.js";

/**
 * The deployment's store and database, as the guardrail process opens them (REDIS_URL or
 * RAILGATE_REDIS_CLUSTER_NODES, DATABASE_URL): without Redis, the embedded store is filled from the
 * embedded database's folder (the all-in-one must be stopped: its folder is locked).
 */
async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const config = storeSettings(process.env);
  const database = await openDatabase(config);
  try {
    const store: Store =
      config.redisUrl || config.redisClusterNodes
        ? await openStore(config, undefined, "railgate config")
        : new MemoryStore();
    try {
      store.attachConfigLog(database);
      await store.restoreConfig();
      return await fn(store);
    } finally {
      await store.close();
    }
  } finally {
    await database.close();
  }
}

/**
 * Export and import of the whole configuration: against the store and the database directly
 * (not the HTTP API), so keys keep their hashes and a deployment is restored with its services
 * stopped. Every write an import makes is audited like any management write.
 */
export const configCommands: Command[] = [
  {
    words: "config export",
    options: { out: { type: "string" } },
    summary:
      "the whole configuration as JSON (workspaces, keys by hash, guardrails, assignments, credits)",
    optionHelp: { out: "write to this file instead of stdout" },
    async run({ values }) {
      const file = await withStore((store) => exportConfig(store));
      const text = `${JSON.stringify(file, null, 2)}\n`;
      const out = str(values, "out");
      if (out === undefined) {
        process.stdout.write(text);
        return undefined;
      }
      writeFileSync(out, text);
      return record({
        written: out,
        workspaces: file.workspaces.length,
        keys: file.keys.length,
        guardrails: file.guardrails.length,
        assignments: file.assignments.length,
      });
    },
  },
  {
    words: "config import",
    args: ["FILE"],
    summary: "writes an export into this deployment (idempotent: what is equal is left alone)",
    async run({ args }) {
      const path = args[0] ?? "";
      let parsed: unknown;
      try {
        parsed = JSON.parse(readFileSync(path === "-" ? 0 : path, "utf8"));
      } catch (err) {
        throw new UsageError(`config import: ${path} is not readable JSON (${String(err)})`);
      }
      let file: ReturnType<typeof checkConfigFile>;
      try {
        file = checkConfigFile(parsed);
      } catch (err) {
        if (err instanceof ConfigFileRefused) throw new UsageError(`config import: ${err.message}`);
        throw err;
      }
      return record({ ...(await withStore((store) => importConfig(store, file))) });
    },
  },
];
