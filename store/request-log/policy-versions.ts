import type { AuditChanges, AuditEvent } from "./audit-log.js";
import type { SqlDatabase } from "./database.js";
import { CHANGE_NOTES } from "./guardrail-versions.js";

/**
 * The name workspace-wide policies' versions are kept under in place of a type: their routes
 * name no type, and a workspace policy's route must not find them. The type is in the snapshot.
 */
export const ACCOUNT_POLICY_VERSIONS = "account";

const NOTE_NAMES: ReadonlySet<string> = new Set(Object.values(CHANGE_NOTES));

/** A policy as one change left it: what its version stores beside the change's audit event. */
export interface PolicySnapshot {
  policyType: string;
  policyId: string;
  workspaceId: string;
  /** The policy's own count of versions, taken in the same write as the change. */
  version: number;
  /** The stored policy (store/policies' JSON). */
  data: Record<string, unknown>;
}

export interface PolicyVersionRow {
  policyType: string;
  policyId: string;
  version: number;
  workspaceId: string;
  at: Date;
  actor: { keyHash: string; label: string; name: string };
  action: string;
  changes: AuditChanges;
  forced: boolean;
  restoredFrom: number | null;
  /** The policy as the change left it; absent in lists. */
  data?: Record<string, unknown>;
  deletedAt: Date | null;
}

/**
 * Records a change of a policy as its version, inside the transaction that writes the change's
 * audit event: once per event (a repeated write adds nothing). The notes of the event (forced,
 * failing checks, the version a restore restored) are columns, not changed fields.
 */
export async function insertPolicyVersion(
  tx: SqlDatabase,
  event: AuditEvent,
  s: PolicySnapshot,
): Promise<void> {
  const changes: AuditChanges = {};
  for (const [name, c] of Object.entries(event.changes)) {
    if (!NOTE_NAMES.has(name)) changes[name] = c;
  }
  const restored = event.changes[CHANGE_NOTES.restoredFrom]?.after;
  await tx.query(
    `INSERT INTO guardrail_policy_versions (policy_type, policy_id, version, workspace_id,
       audit_id, at, actor_key_hash, actor_label, actor_name, action, changes, forced,
       restored_from, data)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $14::jsonb)
     ON CONFLICT DO NOTHING`,
    [
      s.policyType,
      s.policyId,
      s.version,
      s.workspaceId,
      event.id,
      event.at,
      event.actor.keyHash,
      event.actor.label,
      event.actor.name,
      event.action,
      JSON.stringify(changes),
      event.changes[CHANGE_NOTES.forced]?.after === true,
      typeof restored === "number" ? restored : null,
      JSON.stringify(s.data),
    ],
  );
}

/** A policy is gone: its versions are kept from now for the audit retention. */
export async function markPolicyVersionsDeleted(
  tx: SqlDatabase,
  policyType: string,
  policyId: string,
  at: Date,
): Promise<void> {
  await tx.query(
    `UPDATE guardrail_policy_versions SET deleted_at = $3
     WHERE policy_type = $1 AND policy_id = $2 AND deleted_at IS NULL`,
    [policyType, policyId, at],
  );
}

interface Row {
  policy_type: string;
  policy_id: string;
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
  data?: Record<string, unknown> | string;
  deleted_at: Date | null;
}

const COLUMNS =
  "policy_type, policy_id, version, workspace_id, at, actor_key_hash, actor_label, actor_name, action, changes, forced, restored_from, deleted_at";

function fromRow(r: Row): PolicyVersionRow {
  return {
    policyType: r.policy_type,
    policyId: r.policy_id,
    version: r.version,
    workspaceId: r.workspace_id,
    at: r.at,
    actor: { keyHash: r.actor_key_hash, label: r.actor_label, name: r.actor_name },
    action: r.action,
    changes: typeof r.changes === "string" ? JSON.parse(r.changes) : r.changes,
    forced: r.forced,
    restoredFrom: r.restored_from,
    ...(r.data ? { data: typeof r.data === "string" ? JSON.parse(r.data) : r.data } : {}),
    deletedAt: r.deleted_at,
  };
}

/** Reads a policy's versions; removes those of policies deleted before the retention. */
export class PolicyVersions {
  constructor(private readonly db: SqlDatabase) {}

  /** Newest first. */
  async list(
    policyType: string,
    policyId: string,
    offset: number,
    limit: number,
  ): Promise<{ versions: PolicyVersionRow[]; total: number }> {
    const [count] = await this.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM guardrail_policy_versions WHERE policy_type = $1 AND policy_id = $2",
      [policyType, policyId],
    );
    const rows = await this.db.query<Row>(
      `SELECT ${COLUMNS} FROM guardrail_policy_versions WHERE policy_type = $1 AND policy_id = $2
       ORDER BY version DESC OFFSET $3 LIMIT $4`,
      [policyType, policyId, offset, limit],
    );
    return { versions: rows.map(fromRow), total: count?.n ?? 0 };
  }

  async get(
    policyType: string,
    policyId: string,
    version: number,
  ): Promise<PolicyVersionRow | undefined> {
    const [row] = await this.db.query<Row>(
      `SELECT ${COLUMNS}, data FROM guardrail_policy_versions
       WHERE policy_type = $1 AND policy_id = $2 AND version = $3`,
      [policyType, policyId, version],
    );
    return row && fromRow(row);
  }

  /** The numbers a policy's versions run between (none: undefined). */
  async range(
    policyType: string,
    policyId: string,
  ): Promise<{ first: number; last: number } | undefined> {
    const [row] = await this.db.query<{ first: number | null; last: number | null }>(
      `SELECT min(version) AS first, max(version) AS last FROM guardrail_policy_versions
       WHERE policy_type = $1 AND policy_id = $2`,
      [policyType, policyId],
    );
    return row?.first == null || row.last == null
      ? undefined
      : { first: Number(row.first), last: Number(row.last) };
  }

  /** Versions of policies deleted before `cutoff` leave, as the audit log's old days do. */
  async purgeDeletedBefore(cutoff: Date): Promise<number> {
    const rows = await this.db.query<{ n: number }>(
      `WITH gone AS (DELETE FROM guardrail_policy_versions WHERE deleted_at < $1 RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [cutoff],
    );
    return rows[0]?.n ?? 0;
  }
}
