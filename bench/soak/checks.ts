import type {
  AuditObservation,
  CallObservation,
  CreditsObservation,
  KeyUsageObservation,
  RecordObservation,
  ReservationObservation,
} from "./observations.js";

/** One invariant's verdict: how many things it looked at, how many broke it, and a few examples. */
export interface CheckResult {
  name: string;
  checked: number;
  failed: number;
  /** Up to MAX_EXAMPLES of what failed, each one line. */
  examples: string[];
  /** Why the check could not run (then checked and failed are 0). */
  skipped?: string;
}

const MAX_EXAMPLES = 5;

function result(name: string, checked: number, failures: string[]): CheckResult {
  return { name, checked, failed: failures.length, examples: failures.slice(0, MAX_EXAMPLES) };
}

/** Whether a refusal's body is the API's typed error: `{ error: { code, message } }`. */
export function isTypedError(body: unknown): boolean {
  if (typeof body !== "object" || body === null) return false;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== "object" || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    (typeof code === "number" || typeof code === "string") &&
    typeof message === "string" &&
    message.length > 0
  );
}

/**
 * No answer is a 500, and every refusal (4xx/5xx) carries the typed error body. Examples are
 * grouped by route, status and body, with how many and when (seconds into the soak).
 */
export function checkRefusals(calls: readonly CallObservation[]): CheckResult {
  const groups = new Map<string, { count: number; at: number[] }>();
  let checked = 0;
  let failed = 0;
  for (const c of calls) {
    if (c.status === 0) continue;
    checked++;
    const body = JSON.stringify(c.errorBody ?? null).slice(0, 120);
    let line: string | undefined;
    if (c.status === 500) line = `${c.route}: 500 ${body}`;
    else if (c.status >= 400 && !isTypedError(c.errorBody)) {
      line = `${c.route}: ${c.status} without {error:{code,message}}: ${body}`;
    }
    if (line === undefined) continue;
    failed++;
    const g = groups.get(line) ?? { count: 0, at: [] };
    g.count++;
    if (c.atSeconds !== undefined && g.at.length < 8) g.at.push(c.atSeconds);
    groups.set(line, g);
  }
  const examples = [...groups]
    .sort(([, a], [, b]) => b.count - a.count)
    .slice(0, MAX_EXAMPLES)
    .map(([line, g]) => `${g.count} x ${line}${g.at.length ? ` (at ${g.at.join(", ")} s)` : ""}`);
  return { name: "HTTP 500 or untyped refusal", checked, failed, examples };
}

/** Every acknowledged (2xx) management write has an audit event carrying its request id. */
export function checkAuditTrail(
  calls: readonly CallObservation[],
  events: readonly AuditObservation[],
): CheckResult {
  const audited = new Set(events.flatMap((e) => (e.requestId ? [e.requestId] : [])));
  const acked = calls.filter((c) => c.kind === "write" && c.status >= 200 && c.status < 300);
  const failures = acked
    .filter((c) => !c.requestId || !audited.has(c.requestId))
    .map(
      (c) =>
        `${c.route} ${c.status} request ${c.requestId ?? "(none)"}: no audit event${c.atSeconds === undefined ? "" : ` (answered at ${c.atSeconds} s)`}`,
    );
  return result("acknowledged write without audit event", acked.length, failures);
}

/** Every admitted speech request (200 + generation id) has exactly one request-log record. */
export function checkRequestLog(
  calls: readonly CallObservation[],
  records: readonly RecordObservation[],
): CheckResult {
  const count = new Map<string, number>();
  for (const r of records) count.set(r.id, (count.get(r.id) ?? 0) + 1);
  const admitted = calls.filter((c) => c.kind === "speech" && c.status === 200);
  const failures: string[] = [];
  for (const c of admitted) {
    if (!c.generationId) {
      failures.push(`${c.route} 200 without a generation id`);
      continue;
    }
    const n = count.get(c.generationId) ?? 0;
    if (n === 1) continue;
    const cut = c.complete === false ? ", its audio cut short" : "";
    const at = c.atSeconds === undefined ? "" : ` (answered at ${c.atSeconds} s${cut})`;
    failures.push(`generation ${c.generationId}: ${n} records${at}`);
  }
  return result("admitted request without exactly one record", admitted.length, failures);
}

function sumByField(
  records: readonly RecordObservation[],
  field: "keyHash" | "workspaceId",
): Map<string, number> {
  const sums = new Map<string, number>();
  for (const r of records) sums.set(r[field], (sums.get(r[field]) ?? 0) + r.costMicros);
  return sums;
}

/** Each key's usage equals the sum of its records' costs, to the micro-dollar. */
export function checkKeySpend(
  keys: readonly KeyUsageObservation[],
  records: readonly RecordObservation[],
): CheckResult {
  const sums = sumByField(records, "keyHash");
  const failures = keys
    .filter((k) => k.usageMicros !== (sums.get(k.keyHash) ?? 0))
    .map(
      (k) =>
        `key ${k.keyHash.slice(0, 12)}: usage ${k.usageMicros} µ$, records ${sums.get(k.keyHash) ?? 0} µ$ (${k.usageMicros - (sums.get(k.keyHash) ?? 0)})`,
    );
  return result("key usage != sum of its records", keys.length, failures);
}

/** Each metered workspace's credits used (added - balance) equal the sum of its records' costs. */
export function checkCredits(
  workspaces: readonly CreditsObservation[],
  records: readonly RecordObservation[],
): CheckResult {
  const sums = sumByField(records, "workspaceId");
  const failures = workspaces.flatMap((w) => {
    const used = w.addedMicros - w.balanceMicros;
    const recorded = sums.get(w.workspaceId) ?? 0;
    return used === recorded
      ? []
      : [`workspace ${w.workspaceId.slice(0, 8)}: used ${used} µ$, records ${recorded} µ$`];
  });
  return result("credits used != sum of records", workspaces.length, failures);
}

/**
 * No reservation whose lease expired more than `boundMs` ago is still open: its owner died and
 * no live process settled it within the bound. `registry` false: the store keeps no registry.
 */
export function checkReservations(
  reservations: readonly ReservationObservation[],
  nowMs: number,
  boundMs: number,
  registry: boolean,
): CheckResult {
  const name = "reservation unsettled past the bound";
  if (!registry) {
    return {
      name,
      checked: 0,
      failed: 0,
      examples: [],
      skipped: "no {w:<id>}:resv-i key in Redis",
    };
  }
  const failures = reservations
    .filter((r) => nowMs - r.leaseExpiryMs > boundMs)
    .map(
      (r) =>
        `workspace ${r.workspaceId.slice(0, 8)} admission ${r.admissionId}: lease expired ${Math.round((nowMs - r.leaseExpiryMs) / 1000)} s ago`,
    );
  return result(name, reservations.length, failures);
}

function duplicates(ids: readonly string[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) twice.add(id);
    seen.add(id);
  }
  return [...twice];
}

/**
 * No id is handed out twice: two admitted requests with one generation id, a record listed
 * twice, or two audit events with one id.
 */
export function checkDuplicateIds(
  calls: readonly CallObservation[],
  records: readonly RecordObservation[],
  events: readonly AuditObservation[],
): CheckResult {
  const answered = calls.flatMap((c) =>
    c.kind === "speech" && c.status === 200 && c.generationId ? [c.generationId] : [],
  );
  const failures = [
    ...duplicates(answered).map((id) => `generation id ${id} answered twice`),
    ...duplicates(records.map((r) => r.id)).map((id) => `record ${id} listed twice`),
    ...duplicates(events.map((e) => e.id)).map((id) => `audit event ${id} listed twice`),
  ];
  return result("duplicate id", answered.length + records.length + events.length, failures);
}
