import { create, type JsonValue, toJson } from "@bufbuild/protobuf";
import { timestampDate, timestampMs } from "@bufbuild/protobuf/wkt";
import {
  GuardrailInputSchema,
  type GuardrailShadow,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type GetGuardrailShadowResponse,
  GetGuardrailShadowResponseSchema,
  ShadowOutcomeCountSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { shadowReportRows } from "../../store/request-log/shadow-rows.js";

/** How many affected generation ids a report names, as the what-if answer does. */
const SAMPLE_SIZE = 20;

/** A shadow as its audit event shows it: the change and how long it runs. */
export function shadowSummary(shadow: GuardrailShadow | undefined): JsonValue {
  if (!shadow?.change) return null;
  return {
    change: toJson(GuardrailInputSchema, shadow.change),
    update_mask: shadow.updateMask,
    expires_at: shadow.expiresAt ? timestampDate(shadow.expiresAt).toISOString() : null,
  };
}

export function shadowExpired(shadow: GuardrailShadow, nowMs: number): boolean {
  return !shadow.expiresAt || timestampMs(shadow.expiresAt) <= nowMs;
}

/**
 * The shadow with what it would have changed since it started: counted from the request log's
 * records of the workspace that carry this guardrail's shadow outcome.
 */
export async function shadowReport(
  database: SqlDatabase | undefined,
  workspaceId: string,
  guardrailId: string,
  shadow: GuardrailShadow,
  nowMs: number,
): Promise<GetGuardrailShadowResponse> {
  const answer = create(GetGuardrailShadowResponseSchema, {
    shadow,
    expired: shadowExpired(shadow, nowMs),
  });
  if (!database || !shadow.startedAt) return answer;
  const rows = await shadowReportRows(
    database,
    workspaceId,
    guardrailId,
    timestampMs(shadow.startedAt),
    SAMPLE_SIZE,
  );
  answer.changes = rows.changes.map((c) =>
    create(ShadowOutcomeCountSchema, { ...c, count: BigInt(c.count) }),
  );
  answer.outcomesChanged = BigInt(rows.changes.reduce((n, c) => n + c.count, 0));
  answer.affectedGenerationIds = rows.sample;
  return answer;
}
