/** One line of the report. Numbers stay numbers here; formatting happens only when printing. */
export interface Row {
  scenario: string;
  reqPerSec?: number;
  p50Ms?: number;
  p99Ms?: number;
  peakRssMb?: number;
  /** What the row is compared with, in words and numbers. */
  baseline?: string;
  /** Row req/s ÷ baseline req/s (or a scenario-specific ratio, said in `baseline`). */
  ratio?: number;
  /** The target and the measured value it is judged on. */
  target?: string;
  /** undefined = informational row, no target. */
  pass?: boolean;
}

const COLUMNS: [string, (r: Row) => string, "l" | "r"][] = [
  ["scenario", (r) => r.scenario, "l"],
  ["req/s", (r) => num(r.reqPerSec, r.reqPerSec !== undefined && r.reqPerSec < 100 ? 1 : 0), "r"],
  ["p50 ms", (r) => num(r.p50Ms, 2), "r"],
  ["p99 ms", (r) => num(r.p99Ms, 2), "r"],
  ["peak RSS MB", (r) => num(r.peakRssMb, 0), "r"],
  ["baseline", (r) => r.baseline ?? "", "l"],
  ["ratio", (r) => num(r.ratio, 2), "r"],
  ["target", (r) => r.target ?? "", "l"],
  ["result", (r) => (r.pass === undefined ? "" : r.pass ? "pass" : "MISS"), "l"],
];

function num(v: number | undefined, digits: number): string {
  if (v === undefined || Number.isNaN(v)) return "-";
  return v.toLocaleString("en-US", {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

/** A plain-text table: fixed-width columns, numbers right-aligned. */
export function renderTable(rows: Row[]): string {
  const cells = rows.map((r) => COLUMNS.map(([, get]) => get(r)));
  const widths = COLUMNS.map(([title], i) =>
    Math.max(title.length, ...cells.map((c) => (c[i] as string).length)),
  );
  const line = (values: string[]) =>
    values
      .map((v, i) => {
        const w = widths[i] as number;
        return COLUMNS[i]?.[2] === "r" ? v.padStart(w) : v.padEnd(w);
      })
      .join(" | ")
      .trimEnd();
  const header = line(COLUMNS.map(([title]) => title));
  const rule = widths.map((w) => "-".repeat(w)).join("-+-");
  return [header, rule, ...cells.map(line)].join("\n");
}

/** "12,345 req/s, p50 1.23 / p99 4.56 ms" for the baseline column. */
export function describe(reqPerSec: number, p50: number, p99: number, label = ""): string {
  const prefix = label ? `${label} ` : "";
  return `${prefix}${num(reqPerSec, reqPerSec < 100 ? 1 : 0)} req/s, p50 ${num(p50, 2)} / p99 ${num(p99, 2)} ms`;
}

export function fmt(v: number, digits = 2): string {
  return num(v, digits);
}

export function signed(v: number, digits = 2): string {
  return `${v >= 0 ? "+" : ""}${num(v, digits)}`;
}

/** Any plain-text grid: first column left-aligned, the others right-aligned. */
export function renderGrid(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === 0 ? v.padEnd(widths[i] ?? 0) : v.padStart(widths[i] ?? 0)))
      .join(" | ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("-+-"), ...rows.map(line)].join("\n");
}
