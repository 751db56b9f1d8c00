/**
 * What a workspace's replay_data costs a request, on one thread, without the system around it:
 * `BENCH_ONLY=detections npm run bench` (or `node dist/bench/detections.js` after a build).
 * Prints a markdown table: per input length (100, 1,000 and 4,096 characters of prose, and the
 * same with an email address and a phone number in it), the CPU microseconds of running every
 * builtin detector over it once (replay_data "detections"; on a filter thread past the inline
 * budget, INLINE_MAX_MICROS, but CPU all the same) and of sealing it (replay_data
 * "encrypted_input": AES-256-GCM). A workspace with replay_data "none" runs neither.
 * BENCH_DETECTIONS_SECONDS (1) of measurement per cell.
 */
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { BUILTIN_SLUGS } from "../domain/builtin-filters.js";
import { GenerationSchema } from "../gen/railgate/speech/v1/speech_pb.js";
import { CompiledFilters, INLINE_MAX_MICROS } from "../governance/filters/index.js";
import type { TextPart } from "../governance/filters/types.js";
import { sealInput } from "../governance/replay-data/sealed-input.js";
import { embeddedDatabase } from "../store/request-log/embedded-database.js";
import { GenerationRecords } from "../store/request-log/generations.js";
import { migrate } from "../store/request-log/migrate.js";
import { prose } from "./texts.js";

const SECONDS = Number(process.env.BENCH_DETECTIONS_SECONDS ?? 1);

/** CPU microseconds (user + system, this process) per call of `run`, over about SECONDS. */
function cpuMicros(run: () => unknown): number {
  for (let i = 0; i < 20; i++) run(); // warm-up: JIT, the gazetteers' first load, lazy DFA states
  let calls = 0;
  const start = process.cpuUsage();
  const until = performance.now() + SECONDS * 1000;
  while (performance.now() < until) {
    for (let i = 0; i < 10; i++) run();
    calls += 10;
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

/** The same detectors as governance/replay-data/detections.ts, run synchronously here. */
const every = CompiledFilters.compile(
  BUILTIN_SLUGS.map((slug) => ({ slug, action: "flag" as const, label: "" })),
);
const key = randomBytes(32);

/** `chars` characters of the prose. */
function exactly(chars: number): string {
  return prose(chars + 200).slice(0, chars);
}

function withPii(text: string): string {
  const pii = " Write to support@example.com or call 415-555-0134.";
  return text.slice(0, Math.max(0, text.length - pii.length)) + pii;
}

const rows: string[][] = [];
for (const chars of [100, 1_000, 4_096]) {
  for (const [kind, text] of [
    ["prose", exactly(chars)],
    ["prose + email, phone", withPii(exactly(chars))],
  ] as const) {
    const parts: TextPart[] = [{ text, role: "user" }];
    const found = every.apply(parts).outcomes.map((o) => `${o.slug} ${o.count}`);
    const detect = cpuMicros(() => every.apply(parts));
    const seal = cpuMicros(() => sealInput(key, "gen-bench", parts));
    // Where applyFilters (governance/filters/off-thread.ts) runs it.
    const where =
      every.microsPerChar * text.length <= INLINE_MAX_MICROS
        ? "inline"
        : every.maxDetectorMicrosPerChar * text.length < INLINE_MAX_MICROS
          ? "inline, deadline"
          : "thread";
    rows.push([
      String(text.length),
      kind,
      found.join(", ") || "-",
      detect.toFixed(1),
      where,
      seal.toFixed(1),
    ]);
  }
}

/**
 * The request log's share on the embedded PGlite (which runs on the serving process's thread):
 * CPU microseconds per record of inserting batches of 100 with and without detections.
 */
async function recordWriteMicros(): Promise<[number, number]> {
  const db = await embeddedDatabase(undefined);
  await migrate(db);
  const records = new GenerationRecords(db);
  const detections = { email: 1 };
  const measure = async (withDetections: boolean, batches: number): Promise<number> => {
    let seq = 0;
    const batch = () =>
      Array.from({ length: 100 }, () =>
        create(GenerationSchema, {
          id: `gen-${withDetections}-${seq++}`,
          model: "acme/voice",
          workspaceId: "ws",
          keyHash: "k",
          createdAt: timestampFromMs(Date.now()),
        }),
      );
    const replay = withDetections ? () => ({ detections }) : undefined;
    for (let i = 0; i < 5; i++) await records.insert(batch(), replay);
    const start = process.cpuUsage();
    for (let i = 0; i < batches; i++) await records.insert(batch(), replay);
    const used = process.cpuUsage(start);
    return (used.user + used.system) / (batches * 100);
  };
  // Interleaved, the least of three each: the first batches pay the partition's creation.
  const out: [number, number] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
  for (let round = 0; round < 3; round++) {
    out[0] = Math.min(out[0], await measure(false, 50));
    out[1] = Math.min(out[1], await measure(true, 50));
  }
  await db.close();
  return out;
}

const header = [
  "characters",
  "input",
  "detections",
  "detect CPU us/req",
  "runs",
  "seal CPU us/req",
];
console.log(`| ${header.join(" | ")} |`);
console.log(`|${header.map(() => "---").join("|")}|`);
for (const r of rows) console.log(`| ${r.join(" | ")} |`);
const [plain, detected] = await recordWriteMicros();
console.log(
  `\nrequest-log insert on the embedded PGlite, batches of 100: ${plain.toFixed(1)} CPU us/record without replay data, ${detected.toFixed(1)} with detections`,
);
