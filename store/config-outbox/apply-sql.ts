import type { AuditChanges, AuditEvent } from "../request-log/audit-log.js";
import { auditPartitions, insertAuditEvents } from "../request-log/audit-log.js";
import type { SqlDatabase } from "../request-log/database.js";
import {
  insertGuardrailVersion,
  markGuardrailVersionsDeleted,
  VERSION_ACTIONS,
} from "../request-log/guardrail-versions.js";
import type { ConfigEntry, Snapshot } from "./entry.js";

/** Micro-dollars as dollars (governance/policy/money.ts's rule; the store sits below it). */
function fromMicros(micros: number): number {
  return micros / 1_000_000;
}

/** What a top-up changed, as the audit log has always shown it (balance before: null when unmetered). */
export function creditChanges(
  amountMicros: number,
  balanceMicros: number,
  wasMetered: boolean,
): AuditChanges {
  return {
    amount_usd: { before: null, after: fromMicros(amountMicros) },
    balance_usd: {
      before: wasMetered ? fromMicros(balanceMicros - amountMicros) : null,
      after: fromMicros(balanceMicros),
    },
  };
}

/** The audit event an entry carries, with a top-up's balance filled from the script's reply. */
export function auditOfEntry(entry: ConfigEntry): AuditEvent | undefined {
  const a = entry.event.audit;
  if (!a) return undefined;
  const event: AuditEvent = { ...a, at: new Date(a.at) };
  const credits = entry.event.credits;
  if (credits && entry.reply.length >= 2) {
    const [balance, wasMetered] = entry.reply as [number, number];
    event.changes = creditChanges(credits.amountMicros, balance, wasMetered === 1);
  }
  return event;
}

async function applySnapshot(
  tx: SqlDatabase,
  scope: string,
  stamp: number,
  s: Snapshot,
): Promise<void> {
  switch (s.type) {
    case "workspace": {
      await tx.query(
        `INSERT INTO config_workspaces (id, data, stamp, deleted) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data, stamp = EXCLUDED.stamp, deleted = EXCLUDED.deleted
         WHERE config_workspaces.stamp < EXCLUDED.stamp`,
        [s.id, s.data ?? null, stamp, s.data === undefined],
      );
      if (s.data === undefined) {
        // The workspace went with everything in it, as the script deleted it.
        for (const sql of [
          "UPDATE config_guardrails SET deleted = true, data = NULL, stamp = $2 WHERE workspace_id = $1 AND stamp < $2",
          "UPDATE config_api_keys SET deleted = true, data = NULL, stamp = $2 WHERE scope = $1 AND stamp < $2",
          "UPDATE config_assignments SET deleted = true, record = NULL, stamp = $2 WHERE workspace_id = $1 AND stamp < $2",
          "UPDATE config_workspace_members SET deleted = true, record = NULL, stamp = $2 WHERE workspace_id = $1 AND stamp < $2",
        ]) {
          await tx.query(sql, [s.id, stamp]);
        }
        // A tombstone even where no document was recorded yet: a late entry of one cannot
        // bring the deleted workspace's policies back.
        await tx.query(
          `INSERT INTO config_policy_docs (scope, version, doc, stamp, deleted) VALUES ($1, 0, NULL, $2, true)
           ON CONFLICT (scope) DO UPDATE SET doc = NULL, stamp = EXCLUDED.stamp, deleted = true,
             updated_at = now()`,
          [s.id, stamp],
        );
        await tx.query(
          `UPDATE config_org SET value = '', stamp = $2 WHERE name = 'default_workspace' AND value = $1`,
          [s.id, stamp],
        );
      }
      return;
    }
    case "guardrail":
      await tx.query(
        `INSERT INTO config_guardrails (id, workspace_id, data, version, stamp, deleted)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data, version = EXCLUDED.version,
           stamp = EXCLUDED.stamp, deleted = EXCLUDED.deleted
         WHERE config_guardrails.stamp < EXCLUDED.stamp`,
        [s.id, scope, s.data ?? null, s.version, stamp, s.data === undefined],
      );
      if (s.data === undefined) {
        await tx.query(
          `UPDATE config_assignments SET deleted = true, record = NULL, stamp = $2
           WHERE workspace_id = $3 AND guardrail_id = $1 AND stamp < $2`,
          [s.id, stamp, scope],
        );
      }
      return;
    case "key":
      await tx.query(
        `INSERT INTO config_api_keys (hash, scope, data, stamp, deleted) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (hash) DO UPDATE SET scope = EXCLUDED.scope, data = EXCLUDED.data,
           stamp = EXCLUDED.stamp, deleted = EXCLUDED.deleted
         WHERE config_api_keys.stamp < EXCLUDED.stamp`,
        [s.hash, scope, s.data ?? null, stamp, s.data === undefined],
      );
      if (s.data === undefined) {
        await tx.query(
          `UPDATE config_assignments SET deleted = true, record = NULL, stamp = $2
           WHERE kind = 'key' AND workspace_id = $3 AND subject = $1 AND stamp < $2`,
          [s.hash, stamp, scope],
        );
      }
      return;
    case "assignment": {
      const guardrailId =
        s.record === undefined
          ? null
          : ((JSON.parse(s.record) as { guardrailId?: string }).guardrailId ?? null);
      await tx.query(
        `INSERT INTO config_assignments (kind, workspace_id, subject, guardrail_id, record, stamp, deleted)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)
         ON CONFLICT (kind, workspace_id, subject) DO UPDATE SET guardrail_id = EXCLUDED.guardrail_id,
           record = EXCLUDED.record, stamp = EXCLUDED.stamp, deleted = EXCLUDED.deleted
         WHERE config_assignments.stamp < EXCLUDED.stamp`,
        [s.kind, scope, s.subject, guardrailId, s.record ?? null, stamp, s.record === undefined],
      );
      return;
    }
    case "member":
      await tx.query(
        `INSERT INTO config_workspace_members (workspace_id, user_id, record, stamp, deleted)
         VALUES ($1, $2, $3::jsonb, $4, $5)
         ON CONFLICT (workspace_id, user_id) DO UPDATE SET record = EXCLUDED.record,
           stamp = EXCLUDED.stamp, deleted = EXCLUDED.deleted
         WHERE config_workspace_members.stamp < EXCLUDED.stamp`,
        [scope, s.userId, s.record ?? null, stamp, s.record === undefined],
      );
      return;
    case "policies":
      // Ordered by the document's own version (taken in the write's atomic step), not by the
      // stamp: a drain repeated or out of order never puts an older document back.
      if (s.doc === undefined) return;
      await tx.query(
        `INSERT INTO config_policy_docs (scope, version, doc, stamp, deleted)
         VALUES ($1, $2, $3::jsonb, $4, false)
         ON CONFLICT (scope) DO UPDATE SET version = EXCLUDED.version, doc = EXCLUDED.doc,
           stamp = EXCLUDED.stamp, updated_at = now()
         WHERE NOT config_policy_docs.deleted AND config_policy_docs.version < EXCLUDED.version`,
        [scope, s.version, s.doc, stamp],
      );
      return;
    case "credits":
      // The balance is not kept: it is the ledger less what the request log charged.
      return;
  }
}

/**
 * A guardrail's version rides the entry of the change that made it: the change's audit event
 * (who, when, which fields) and the snapshot the same script took. A deletion (of the
 * guardrail, or of its workspace) starts its versions' retention.
 */
async function applyVersions(tx: SqlDatabase, e: ConfigEntry): Promise<void> {
  const audit = e.event.audit;
  const at = audit ? new Date(audit.at) : new Date(Math.floor(e.stamp / 1000));
  for (const s of e.snapshots) {
    if (s.type === "workspace" && s.data === undefined)
      await markGuardrailVersionsDeleted(tx, { workspaceId: s.id }, at);
    if (s.type !== "guardrail") continue;
    if (s.data === undefined) await markGuardrailVersionsDeleted(tx, { guardrailId: s.id }, at);
    else if (audit && VERSION_ACTIONS.has(audit.action) && audit.resource.id === s.id) {
      const event = auditOfEntry(e);
      if (event) await insertGuardrailVersion(tx, event, s.id, e.scope, s.data);
    }
  }
}

/**
 * Writes drained changes to the database in one transaction: their audit events (once each, by
 * id), their ledger rows (once each, by id) and their snapshots (each only over an older one).
 * Applying the same entries twice, or an older entry after a newer one, changes nothing more.
 */
export async function applyConfigEntries(db: SqlDatabase, entries: ConfigEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const audits = entries.flatMap((e) => {
    const a = auditOfEntry(e);
    return a ? [a] : [];
  });
  await auditPartitions(db).ensure(audits.map((a) => a.at));
  await db.transaction(async (tx) => {
    await insertAuditEvents(tx, audits);
    for (const e of entries) {
      const c = e.event.credits;
      if (c) {
        await tx.query(
          `INSERT INTO config_credit_ledger (id, workspace_id, amount_micros, at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (id) DO NOTHING`,
          [c.id, c.workspaceId, c.amountMicros, new Date(c.at)],
        );
      }
      if (e.event.defaultWorkspace !== undefined) {
        await tx.query(
          `INSERT INTO config_org (name, value, stamp) VALUES ('default_workspace', $1, $2)
           ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, stamp = EXCLUDED.stamp
           WHERE config_org.stamp < EXCLUDED.stamp`,
          [e.event.defaultWorkspace, e.stamp],
        );
      }
      for (const s of e.snapshots) await applySnapshot(tx, e.scope, e.stamp, s);
      await applyVersions(tx, e);
    }
  });
}
