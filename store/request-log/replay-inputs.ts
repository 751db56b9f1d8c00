import type { SqlDatabase } from "./database.js";
import { WINDOW_WHERE } from "./replay-rows.js";

/**
 * Clears the encrypted inputs whose replay_data_days have passed (the hourly maintenance; a
 * partition dropped for the request log's retention takes its inputs with it first). The
 * partial index generations_replay_input_until holds only records that still carry one.
 */
export async function expireReplayInputs(db: SqlDatabase, nowMs: number): Promise<number> {
  const rows = await db.query<{ n: number }>(
    `WITH cleared AS (
       UPDATE generations SET replay_input = NULL, replay_input_until = NULL
        WHERE replay_input IS NOT NULL AND replay_input_until <= $1::timestamptz
        RETURNING 1)
     SELECT count(*)::int4 AS n FROM cleared`,
    [new Date(nowMs).toISOString()],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * The records a content-filter replay decides ($1..$4 as WINDOW_WHERE, $5 the guardrail, $6
 * now): those an endpoint was given, and those this guardrail's own content filters refused.
 * A record another rule or guardrail refused stays refused whatever the filters do.
 */
const CONTENT_WHERE = `${WINDOW_WHERE}
  AND (status IN ('completed', 'interrupted', 'cancelled', 'failed')
       OR (status = 'refused' AND refusal_reason IN ('content_blocked', 'prompt_injection_blocked')
           AND guardrail_id = $5))`;
const HAS_INPUT = "replay_input IS NOT NULL AND replay_input_until > $6::timestamptz";

/** Records alike in their detections (or in having neither detections nor an input). */
export interface DetectionGroup {
  /** null: the record keeps no replay data. */
  detections: Record<string, number> | null;
  /** Refused by this guardrail's content filters as recorded. */
  blocked: boolean;
  count: number;
  someId: string;
}

/** A record whose input was kept, sealed. */
export interface SealedRecord {
  id: string;
  atMs: number;
  blocked: boolean;
  sealed: Uint8Array;
}

function windowParams(
  workspaceId: string,
  guardrailId: string,
  labels: readonly string[],
  fromMs: number,
  toMs: number,
  nowMs: number,
): unknown[] {
  return [workspaceId, labels, fromMs, toMs, guardrailId, new Date(nowMs).toISOString()];
}

/** The window's records without a kept input, grouped by their detections (or none). */
export async function detectionGroups(
  db: SqlDatabase,
  workspaceId: string,
  guardrailId: string,
  labels: readonly string[],
  fromMs: number,
  toMs: number,
  nowMs: number,
): Promise<DetectionGroup[]> {
  const rows = await db.query<{
    detections: Record<string, number> | string | null;
    blocked: boolean;
    n: number;
    some_id: string;
  }>(
    `SELECT replay_detections AS detections, status = 'refused' AS blocked, count(*)::int8 AS n,
            min(id COLLATE "C") AS some_id
       FROM generations
      WHERE ${CONTENT_WHERE} AND NOT (${HAS_INPUT})
      GROUP BY 1, 2`,
    windowParams(workspaceId, guardrailId, labels, fromMs, toMs, nowMs),
  );
  return rows.map((r) => ({
    detections: typeof r.detections === "string" ? JSON.parse(r.detections) : r.detections,
    blocked: r.blocked,
    count: Number(r.n),
    someId: r.some_id,
  }));
}

const PAGE = 500;

/** The window's records with a kept input, oldest first, a page at a time. */
export async function* sealedRecords(
  db: SqlDatabase,
  workspaceId: string,
  guardrailId: string,
  labels: readonly string[],
  fromMs: number,
  toMs: number,
  nowMs: number,
): AsyncGenerator<SealedRecord[]> {
  let after: { at: string; id: string } = { at: new Date(0).toISOString(), id: "" };
  for (;;) {
    const rows = await db.query<{
      id: string;
      created_at: Date;
      blocked: boolean;
      replay_input: Uint8Array;
    }>(
      `SELECT id, created_at, status = 'refused' AS blocked, replay_input
         FROM generations
        WHERE ${CONTENT_WHERE} AND ${HAS_INPUT}
          AND (created_at, id) > ($7::timestamptz, $8)
        ORDER BY created_at, id LIMIT ${PAGE}`,
      [...windowParams(workspaceId, guardrailId, labels, fromMs, toMs, nowMs), after.at, after.id],
    );
    if (rows.length === 0) return;
    yield rows.map((r) => ({
      id: r.id,
      atMs: r.created_at.getTime(),
      blocked: r.blocked,
      sealed: r.replay_input,
    }));
    const last = rows[rows.length - 1] as (typeof rows)[number];
    after = { at: last.created_at.toISOString(), id: last.id };
    if (rows.length < PAGE) return;
  }
}
