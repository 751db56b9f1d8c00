import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { GuardrailInput } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import type { GetGuardrailShadowResponse } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import {
  arrayOf,
  BOOLEAN,
  DATE_TIME,
  INTEGER,
  type JsonSchema,
  orNull,
  STRINGS,
  shapeOf,
  specSchema,
} from "../openapi/spec-schema.js";
import { badRequest, checkFields, type Spec } from "./fields.js";
import {
  guardrailBodySchema,
  guardrailChangeToJson,
  guardrailInputFromJson,
} from "./guardrail-json.js";
import { INSTANT_PATTERN, parseInstant } from "./instant.js";
import { isoOrNull } from "./proto-json.js";

const BODY: Spec = {
  change: { type: "object" },
  expires_at: { type: "string", rules: { pattern: INSTANT_PATTERN } },
};

export const SHADOW_BODY_SCHEMA: JsonSchema = specSchema(BODY, {
  required: ["change", "expires_at"],
  refine: { change: guardrailBodySchema([]) },
});

/** A shadow's body: the change (a PATCH body: its keys are the mask) and when it ends. */
export function shadowRequestFromJson(body: Record<string, unknown>): {
  change: GuardrailInput;
  paths: string[];
  expiresAt: Timestamp;
} {
  checkFields(body, BODY);
  if (body.change === undefined) throw badRequest("change is required (the body a PATCH takes)");
  const expiresAt = shadowExpiresAt(body);
  const { input, paths } = guardrailInputFromJson(body.change as Record<string, unknown>);
  return { change: input, paths, expiresAt };
}

/** A shadow body's `expires_at`, a guardrail's or a policy's (how far ahead: the service's rule). */
export function shadowExpiresAt(body: Record<string, unknown>): Timestamp {
  if (body.expires_at === undefined)
    throw badRequest("expires_at is required: an ISO 8601 date-time, at most 30 days ahead");
  const at = parseInstant(body.expires_at as string);
  if (!at) throw badRequest("expires_at must be an ISO 8601 date-time, e.g. 2026-12-09T08:00:00Z");
  return timestampFromDate(at);
}

const OUTCOMES: JsonSchema = { enum: ["allowed", "refused", "redacted", "flagged"] };
const BUDGET_OUTCOMES: JsonSchema = { enum: ["allowed", "refused"] };

/** What a shadow's report holds, a guardrail's or a guardrail policy's alike. */
export type ShadowReport = Pick<
  GetGuardrailShadowResponse,
  "expired" | "outcomesChanged" | "changes" | "affectedGenerationIds" | "budget"
> & { shadow?: { startedAt?: Timestamp; expiresAt?: Timestamp } };

/** A shadow's report as `GET .../shadow` answers it, with its change in the words of its body. */
export function shadowReportToJson(r: ShadowReport, change: Record<string, unknown>) {
  const s = r.shadow;
  return {
    change,
    started_at: isoOrNull(s?.startedAt),
    expires_at: isoOrNull(s?.expiresAt),
    expired: r.expired,
    outcomes_changed: Number(r.outcomesChanged),
    changes: r.changes.map((c) => ({ live: c.live, shadow: c.shadow, count: Number(c.count) })),
    affected_generation_ids: r.affectedGenerationIds,
    budget: {
      outcomes_changed: Number(r.budget?.outcomesChanged ?? 0n),
      changes: (r.budget?.changes ?? []).map((c) => ({
        live: c.live,
        shadow: c.shadow,
        count: Number(c.count),
      })),
      affected_generation_ids: r.budget?.affectedGenerationIds ?? [],
    },
  };
}

export function shadowToJson(r: GetGuardrailShadowResponse) {
  const s = r.shadow;
  return shadowReportToJson(r, s?.change ? guardrailChangeToJson(s.change, s.updateMask) : {});
}

export type ShadowJson = ReturnType<typeof shadowReportToJson>;

export const SHADOW_JSON_SCHEMA: JsonSchema = shapeOf<ShadowJson>({
  change: { type: "object" },
  started_at: orNull(DATE_TIME),
  expires_at: orNull(DATE_TIME),
  expired: BOOLEAN,
  outcomes_changed: INTEGER,
  changes: arrayOf(
    shapeOf<ShadowJson["changes"][number]>({ live: OUTCOMES, shadow: OUTCOMES, count: INTEGER }),
  ),
  affected_generation_ids: STRINGS,
  budget: shapeOf<ShadowJson["budget"]>({
    outcomes_changed: INTEGER,
    changes: arrayOf(
      shapeOf<ShadowJson["budget"]["changes"][number]>({
        live: BUDGET_OUTCOMES,
        shadow: BUDGET_OUTCOMES,
        count: INTEGER,
      }),
    ),
    affected_generation_ids: STRINGS,
  }),
});
