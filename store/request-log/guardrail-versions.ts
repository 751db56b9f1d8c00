import type { AuditChanges, AuditEvent } from "./audit-log.js";
import type { SqlDatabase } from "./database.js";

/** The audit actions whose guardrail snapshot is a new version. */
export const VERSION_ACTIONS: ReadonlySet<string> = new Set([
  "guardrail.create",
  "guardrail.update",
  "guardrail.restore",
]);

/**
 * What an audit event says about a change besides its fields: that it was forced past failing
 * checks (and which), and which version a restore restored. Not fields of the guardrail, so a
 * version's changes leave them out and keep them as columns.
 */
export const CHANGE_NOTES = {
  forced: "forced",
  failingChecks: "failing_checks",
  restoredFrom: "restored_from_version",
} as const;

const NOTE_NAMES: ReadonlySet<string> = new Set(Object.values(CHANGE_NOTES));

export interface GuardrailVersionRow {
  guardrailId: string;
  version: number;
  workspaceId: string;
  at: Date;
  actor: { keyHash: string; label: string; name: string };
  action: string;
  changes: AuditChanges;
  forced: boolean;
  restoredFrom: number | null;
  /** The guardrail as the change left it (the store's field encoding); absent in lists. */
  data?: Uint8Array;
  deletedAt: Date | null;
}

/**
 * Records a change of a guardrail as its next version, inside the drain's transaction: numbered
 * one above the guardrail's last, once per audit event (a repeated drain adds nothing). Two
 * drains racing on one guardrail cannot both take a number: the second's transaction fails on
 * the primary key and its entries are drained again.
 */
export async function insertGuardrailVersion(
  tx: SqlDatabase,
  event: AuditEvent,
  guardrailId: string,
  workspaceId: string,
  data: Uint8Array,
): Promise<void> {
  const changes: AuditChanges = {};
  for (const [name, c] of Object.entries(event.changes)) {
    if (!NOTE_NAMES.has(name)) changes[name] = c;
  }
  const restored = event.changes[CHANGE_NOTES.restoredFrom]?.after;
  await tx.query(
    `INSERT INTO guardrail_versions (guardrail_id, version, workspace_id, audit_id, at,
       actor_key_hash, actor_label, actor_name, action, changes, forced, restored_from, data)
     SELECT $1, COALESCE(MAX(version), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12
       FROM guardrail_versions WHERE guardrail_id = $1
     ON CONFLICT (audit_id) DO NOTHING`,
    [
      guardrailId,
      workspaceId,
      event.id,
      event.at,
      event.actor.keyHash,
      event.actor.label,
      event.actor.name,
      event.action,
      JSON.stringify(changes),
      event.changes[CHANGE_NOTES.forced]?.after === true,
      typeof restored === "number" ? restored : null,
      data,
    ],
  );
}

/** A guardrail is gone: its versions are kept from now for the audit retention. */
export async function markGuardrailVersionsDeleted(
  tx: SqlDatabase,
  where: { guardrailId: string } | { workspaceId: string },
  at: Date,
): Promise<void> {
  const [column, value] =
    "guardrailId" in where
      ? ["guardrail_id", where.guardrailId]
      : ["workspace_id", where.workspaceId];
  await tx.query(
    `UPDATE guardrail_versions SET deleted_at = $2 WHERE ${column} = $1 AND deleted_at IS NULL`,
    [value, at],
  );
}

interface Row {
  guardrail_id: string;
  version: number;
  workspace_id: string;
  at: Date;
  actor_key_hash: string;
  actor_label: string;
  actor_name: string;
  action: string;
  changes: AuditChanges;
  forced: boolean;
  restored_from: number | null;
  data?: Uint8Array;
  deleted_at: Date | null;
}

const COLUMNS =
  "guardrail_id, version, workspace_id, at, actor_key_hash, actor_label, actor_name, action, changes, forced, restored_from, deleted_at";

function fromRow(r: Row): GuardrailVersionRow {
  return {
    guardrailId: r.guardrail_id,
    version: r.version,
    workspaceId: r.workspace_id,
    at: r.at,
    actor: { keyHash: r.actor_key_hash, label: r.actor_label, name: r.actor_name },
    action: r.action,
    changes: r.changes,
    forced: r.forced,
    restoredFrom: r.restored_from,
    ...(r.data ? { data: r.data } : {}),
    deletedAt: r.deleted_at,
  };
}

/** Reads a guardrail's versions; removes those of guardrails deleted before the retention. */
export class GuardrailVersions {
  constructor(private readonly db: SqlDatabase) {}

  /** Newest first. */
  async list(
    guardrailId: string,
    offset: number,
    limit: number,
  ): Promise<{ versions: GuardrailVersionRow[]; total: number }> {
    const [count] = await this.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM guardrail_versions WHERE guardrail_id = $1",
      [guardrailId],
    );
    const rows = await this.db.query<Row>(
      `SELECT ${COLUMNS} FROM guardrail_versions WHERE guardrail_id = $1
       ORDER BY version DESC OFFSET $2 LIMIT $3`,
      [guardrailId, offset, limit],
    );
    return { versions: rows.map(fromRow), total: count?.n ?? 0 };
  }

  async get(guardrailId: string, version: number): Promise<GuardrailVersionRow | undefined> {
    const [row] = await this.db.query<Row>(
      `SELECT ${COLUMNS}, data FROM guardrail_versions WHERE guardrail_id = $1 AND version = $2`,
      [guardrailId, version],
    );
    return row && fromRow(row);
  }

  /** Versions of guardrails deleted before `cutoff` leave, as the audit log's old days do. */
  async purgeDeletedBefore(cutoff: Date): Promise<number> {
    const rows = await this.db.query<{ n: number }>(
      `WITH gone AS (DELETE FROM guardrail_versions WHERE deleted_at < $1 RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [cutoff],
    );
    return rows[0]?.n ?? 0;
  }
}
