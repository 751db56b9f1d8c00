import { componentLogger } from "../../platform/observability/logger.js";
import { auditEventOf } from "../request-log/audit-log.js";
import type { SqlDatabase } from "../request-log/database.js";
import { applyConfigEntries } from "./apply-sql.js";
import type { AuditNote, ConfigEntry, OutboxEvent, Snapshot } from "./entry.js";

const log = componentLogger("config-journal");

/**
 * The embedded store's path to the configuration tables: one process, so no outbox. Each
 * write's entry (audit event and snapshots) goes to the database before the write answers; an
 * entry the database refused is kept and written with the next one.
 */
export class ConfigJournal {
  private last = 0;
  private pending: ConfigEntry[] = [];

  constructor(private readonly db: SqlDatabase) {}

  /** Ordered like a Redis stream id (ms x 1000 + sequence), so both stamp the same way. */
  private stamp(): number {
    this.last = Math.max(Date.now() * 1000, this.last + 1);
    return this.last;
  }

  async write(
    scope: string,
    note: AuditNote | undefined,
    snapshots: Snapshot[],
    extra: OutboxEvent = {},
    reply: number[] = [],
  ): Promise<void> {
    const event: OutboxEvent = { ...extra };
    if (note) {
      const audit = auditEventOf(note.origin, note.entry);
      event.audit = { ...audit, at: audit.at.toISOString() };
    }
    this.pending.push({ scope, stamp: this.stamp(), event, reply, snapshots });
    const batch = this.pending.splice(0);
    try {
      await applyConfigEntries(this.db, batch);
    } catch (err) {
      log.warn({ err: String(err) }, "configuration journal not written; kept for the next write");
      this.pending.unshift(...batch);
    }
  }
}
