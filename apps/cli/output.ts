/**
 * How the CLI prints: a table for people by default, the same data as JSON
 * with --json for scripts (jq). Nested values print as compact JSON in a table
 * cell, so nothing is hidden from the table view.
 */
export type Row = Record<string, unknown>;

/** What a command hands back: rows for a table, or one record printed as field/value lines. */
export type Output =
  | { kind: "rows"; rows: Row[]; columns: string[]; json: unknown; footer?: string }
  | { kind: "record"; record: Row; json: unknown; footer?: string };

export function rows(list: Row[], columns: string[], json: unknown = list): Output {
  return { kind: "rows", rows: list, columns, json };
}

export function record(value: Row, json: unknown = value): Output {
  return { kind: "record", record: value, json };
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return "-";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return String(v);
  return JSON.stringify(v);
}

function table(header: string[], body: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), ...body.map(line)].join("\n");
}

export function render(out: Output, json: boolean): string {
  if (json) return JSON.stringify(out.json, null, 2);
  if (out.kind === "record") {
    const fields = table(
      ["FIELD", "VALUE"],
      Object.entries(out.record).map(([k, v]) => [k, cell(v)]),
    );
    return out.footer ? `${fields}\n${out.footer}` : fields;
  }
  const body =
    out.rows.length === 0
      ? "(none)"
      : table(
          out.columns.map((c) => c.toUpperCase()),
          out.rows.map((r) => out.columns.map((c) => cell(r[c]))),
        );
  // Paging hints (the next cursor, the total) below the table; --json has them as fields.
  return out.footer ? `${body}\n${out.footer}` : body;
}
