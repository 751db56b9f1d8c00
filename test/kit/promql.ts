import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

/**
 * Words of PromQL that are not series names: binary operators, modifiers, keywords, and the
 * aggregation operators (which may be followed by `by (...)` instead of their parentheses).
 */
const KEYWORDS = new Set([
  "sum",
  "min",
  "max",
  "avg",
  "group",
  "stddev",
  "stdvar",
  "count",
  "count_values",
  "bottomk",
  "topk",
  "quantile",
  "limitk",
  "limit_ratio",
  "and",
  "or",
  "unless",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "offset",
  "inf",
  "nan",
]);

/** Keywords followed by a parenthesized list of label names, not of expressions. */
const LABEL_LISTS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);

/**
 * The series names a PromQL expression reads: every identifier that is not a function or
 * aggregation (followed by "("), a keyword, a label name (in `{...}`, or in the list after
 * by/without/on/ignoring/group_left/group_right), a string, a number or a duration (`[5m]`,
 * `offset 1h`), or a Grafana variable (`$__rate_interval`).
 */
export function seriesNames(expr: string): string[] {
  const names = new Set<string>();
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/#[^\n]*/g, " ")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ");
  const token = /\$\w+|\d[\w.]*(?:[eE][+-]?\d+)?|[a-zA-Z_:][a-zA-Z0-9_:]*|\S/g;
  const tokens = [...text.matchAll(token)].map((m) => m[0]);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as string;
    if (LABEL_LISTS.has(t.toLowerCase()) && tokens[i + 1] === "(") {
      while (i < tokens.length && tokens[i] !== ")") i++;
      continue;
    }
    if (!/^[a-zA-Z_:]/.test(t) || KEYWORDS.has(t.toLowerCase())) continue;
    if (tokens[i + 1] === "(") continue;
    names.add(t);
  }
  return [...names];
}

/** The value of one series in Prometheus text exposition (0 when absent), labels in any order. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const got = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) total += Number(match[3]);
  }
  return total;
}

/** The names of the samples in a Prometheus text exposition (comment lines left out). */
export function exposedSeries(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line);
    if (m?.[1]) names.add(m[1]);
  }
  return names;
}

/** One PromQL expression of a shipped file, and where it is (for a failure's message). */
export interface ShippedExpression {
  where: string;
  expr: string;
}

const repoFile = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

export const DASHBOARD_FILE = repoFile("deploy/grafana/railgate.json");
export const RULES_FILE = repoFile("deploy/prometheus/railgate-rules.yml");
export const RULES_TEST_FILE = repoFile("deploy/prometheus/railgate-rules.test.yml");

interface Panel {
  title?: string;
  targets?: { expr?: string; refId?: string }[];
  panels?: Panel[];
}

/** Every PromQL expression of the Grafana dashboard: each panel's targets (rows' too), each query variable. */
export function dashboardExpressions(): ShippedExpression[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, "utf8")) as {
    panels: Panel[];
    templating?: { list: { name: string; type: string; query?: unknown }[] };
  };
  const out: ShippedExpression[] = [];
  const walk = (panels: Panel[]) => {
    for (const p of panels) {
      for (const t of p.targets ?? []) {
        if (t.expr !== undefined)
          out.push({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr });
      }
      walk(p.panels ?? []);
    }
  };
  walk(dashboard.panels);
  for (const v of dashboard.templating?.list ?? []) {
    if (v.type !== "query") continue;
    const q = typeof v.query === "string" ? v.query : (v.query as { query: string }).query;
    // label_values(series, label): the series is PromQL, the label is not.
    const series = /^label_values\((.*),\s*\w+\)$/.exec(q)?.[1] ?? q;
    out.push({ where: `variable ${v.name}`, expr: series });
  }
  return out;
}

/** Every expression of the alert rules file. */
export function ruleExpressions(): ShippedExpression[] {
  const file = parse(readFileSync(RULES_FILE, "utf8")) as {
    groups: { name: string; rules: { alert?: string; record?: string; expr: string }[] }[];
  };
  return file.groups.flatMap((g) =>
    g.rules.map((r) => ({ where: `rule ${r.alert ?? r.record}`, expr: r.expr })),
  );
}
