import { migration as generations } from "./0001-generations.js";
import { migration as auditLog } from "./0002-audit-log.js";
import { migration as webhooks } from "./0003-webhooks.js";
import { migration as configuration } from "./0004-configuration.js";
import { migration as decidingPolicy } from "./0005-deciding-policy.js";
import { migration as refusals } from "./0006-refusals.js";
import { migration as replayColumns } from "./0007-replay-columns.js";
import { migration as guardrailVersions } from "./0008-guardrail-versions.js";
import { migration as shadowOutcomes } from "./0009-shadow-outcomes.js";
import { migration as workspaceMembers } from "./0010-workspace-members.js";
import { migration as policyVersions } from "./0012-policy-versions.js";
import { migration as replayData } from "./0014-replay-data.js";
import { migration as replayBudgetAggregate } from "./0016-replay-budget-aggregate.js";
import { migration as policyDocuments } from "./0017-policy-documents.js";
import type { Migration } from "./migration.js";

/**
 * Every migration, in version order. Numbers taken or reserved (one per feature, so branches
 * built at the same time never collide):
 *   0001 generations (the request log)
 *   0002 audit log
 *   0003 webhooks    (reserved for the budget-webhook work)
 *   0004 configuration (the durable copy of what Redis serves: store/config-outbox)
 *   0005 deciding policy (the request log's policy_id column)
 *   0006 refusals (refused requests by reason)
 *   0007 replay columns (what a guardrail what-if replay reads of each record)
 *   0008 guardrail versions (each change of a guardrail, filled by the outbox's drain)
 *   0009 shadow outcomes (where a guardrail's shadow decided a request differently)
 *   0010 workspace members (the durable copy of added members: store/config-outbox)
 *   0012 guardrail policy versions (each change of a policy, written with its audit event)
 *   0014 replay data (detections or an encrypted input a what-if replay decides content filters by)
 *   0016 replay budget aggregate (a what-if replay's budget recurrence, in the database)
 *   0017 policy documents (the durable copy of guardrail policy documents: store/config-outbox)
 * A new migration takes the next free number and is appended here.
 */
export const MIGRATIONS: readonly Migration[] = [
  generations,
  auditLog,
  webhooks,
  configuration,
  decidingPolicy,
  refusals,
  replayColumns,
  guardrailVersions,
  shadowOutcomes,
  workspaceMembers,
  policyVersions,
  replayData,
  replayBudgetAggregate,
  policyDocuments,
];
