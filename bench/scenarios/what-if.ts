import { createHash, randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ModelCatalog } from "../../domain/catalog/model-catalog.js";
import {
  GuardrailSchema,
  Region,
  ResetInterval,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  AudioFormat,
  DataPolicySchema,
  type Generation,
  GenerationSchema,
  GenerationStatus,
} from "../../gen/railgate/speech/v1/speech_pb.js";
import { simulate } from "../../services/guardrail/simulate.js";
import { loadCatalog } from "../../services/speech/catalog/load-catalog.js";
import { GenerationRecords } from "../../store/request-log/generations.js";
import { createTestDatabase } from "../../test/kit/databases.js";
import { summarize } from "../stats.js";
import { type BaseContext, progress } from "./context.js";

const DAY = 86_400_000;
/** The target: a 30-day replay over 1,000,000 records answers in under 2 s at p95. */
const TARGET_P95_MS = 2_000;
const RUNS = 7;

function rowsWanted(): number {
  const raw = process.env.BENCH_WHATIF_ROWS;
  const n = raw ? Number(raw) : 1_000_000;
  if (!Number.isSafeInteger(n) || n < 1_000)
    throw new Error(`BENCH_WHATIF_ROWS must be >= 1000, got ${raw}`);
  return n;
}

/**
 * A 30-day replay of one guardrail's traffic on PostgreSQL (a throwaway database on the test
 * server): 1,000,000 records (BENCH_WHATIF_ROWS) the guardrail governed, over 30 days, 200 keys
 * of 20 members, written straight into the table; then replays of a daily budget no window
 * reaches and of one every window overflows, each timed RUNS times.
 */
export async function whatIfScenario(base: BaseContext): Promise<void> {
  const rows = rowsWanted();
  const now = Date.now();
  const ws = randomUUID();
  const guardrailId = randomUUID();
  const keys = Array.from({ length: 200 }, (_, i) =>
    createHash("sha256").update(`whatif-key-${i}`).digest("hex"),
  );
  const test = await createTestDatabase("postgres");
  try {
    const records = new GenerationRecords(test.db);
    const policy = create(DataPolicySchema, { zeroDataRetention: true });
    progress(`what-if: writing ${rows} records`);
    const chunk = 5_000;
    for (let from = 0; from < rows; from += chunk) {
      const batch: Generation[] = [];
      for (let i = from; i < Math.min(rows, from + chunk); i++) {
        const refused = i % 20 === 0;
        batch.push(
          create(GenerationSchema, {
            id: `gen-${randomUUID()}`,
            model: "acme/voice-a",
            provider: refused ? "" : "acme",
            characters: 40 + (i % 400),
            costUsd: refused ? 0 : (40 + (i % 400)) * 0.000015,
            format: AudioFormat.MP3,
            keyHash: keys[(i * 7919) % keys.length] as string,
            workspaceId: ws,
            status: refused ? GenerationStatus.REFUSED : GenerationStatus.COMPLETED,
            refusalReason: refused ? "budget_exceeded" : "",
            guardrailId: refused ? guardrailId : "",
            dataRegion: Region.GLOBAL,
            governedBy: [`key:${guardrailId}`],
            servedDataPolicy: refused ? undefined : policy,
            createdAt: timestampFromMs(now - 30 * DAY + Math.floor((i / rows) * 30 * DAY) + 1),
          }),
        );
      }
      await records.insert(batch);
      if ((from + chunk) % 100_000 === 0) progress(`  ${from + chunk} records`);
    }
    await test.db.query("ANALYZE generations");
    const current = create(GuardrailSchema, { id: guardrailId, workspaceId: ws, name: "bench" });
    const deps = {
      database: test.db,
      catalog: new ModelCatalog(loadCatalog({ file: base.catalogFile }), []),
      account: { allowSafetyRetentionGoogle: true, allowSafetyRetentionOther: true },
      retentionDays: 31,
    };
    // A key spends about $0.60 a day: a $1 daily limit no day reaches (every group decided
    // whole), a $0.50 one every day overflows (the budget replayed in the database, the records
    // after each day's first crossing read in order: the worst case).
    for (const { name, limitUsd } of [
      { name: "no window overflows", limitUsd: 1 },
      { name: "every window overflows", limitUsd: 0.5 },
    ]) {
      const proposed = create(GuardrailSchema, {
        ...current,
        limitUsd,
        resetInterval: ResetInterval.DAILY,
      });
      const ms: number[] = [];
      let replayed = 0n;
      for (let run = 0; run < RUNS; run++) {
        const started = performance.now();
        const res = await simulate(
          deps,
          async () => "",
          current,
          proposed,
          now - 30 * DAY,
          now + 1,
        );
        ms.push(performance.now() - started);
        replayed = res.requestsReplayed;
        progress(
          `  ${name}, replay ${run + 1}: ${ms.at(-1)?.toFixed(0)} ms, ${res.outcomesChanged} changed`,
        );
      }
      const s = summarize(ms);
      // Nearest rank: with a handful of replays, the slowest but none.
      const p95 = [...ms].sort((a, b) => a - b)[Math.ceil(0.95 * ms.length) - 1] ?? Number.NaN;
      base.report.measurement(`what-if-postgres-${limitUsd}`, {
        rows,
        replayed: Number(replayed),
        ms,
      });
      base.report.row({
        scenario: `what-if replay, 30 days, ${rows.toLocaleString("en")} records, ${name} (postgres)`,
        p50Ms: s.p50,
        p99Ms: s.p99,
        target: `p95 < ${TARGET_P95_MS} ms (${p95.toFixed(0)} ms)`,
        pass: p95 < TARGET_P95_MS,
      });
    }
  } finally {
    await test.dispose();
  }
}
