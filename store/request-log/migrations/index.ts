import { migration as generations } from "./0001-generations.js";
import { migration as auditLog } from "./0002-audit-log.js";
import { migration as webhooks } from "./0003-webhooks.js";
import { migration as configuration } from "./0004-configuration.js";
import { migration as replayColumns } from "./0007-replay-columns.js";
import type { Migration } from "./migration.js";

/**
 * Every migration, in version order. Numbers taken or reserved (one per feature, so branches
 * built at the same time never collide):
 *   0001 generations (the request log)
 *   0002 audit log
 *   0003 webhooks    (reserved for the budget-webhook work)
 *   0004 configuration (the durable copy of what Redis serves: store/config-outbox)
 *   0007 replay columns (what a guardrail what-if replay reads of each record)
 * A new migration takes the next free number and is appended here.
 */
export const MIGRATIONS: readonly Migration[] = [
  generations,
  auditLog,
  webhooks,
  configuration,
  replayColumns,
];
