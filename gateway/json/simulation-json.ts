import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { GuardrailInput } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  ReplayRefusalSchema,
  type SimulateGuardrailResponse,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import {
  arrayOf,
  DATE_TIME,
  INTEGER,
  type JsonSchema,
  NUMBER,
  orNull,
  STRING,
  STRINGS,
  shapeOf,
  specSchema,
} from "../openapi/spec-schema.js";
import { apiEnumOf } from "./enums.js";
import { badRequest, checkFields, type Spec } from "./fields.js";
import { guardrailBodySchema, guardrailInputFromJson } from "./guardrail-json.js";
import { INSTANT_PATTERN, parseInstant } from "./instant.js";
import { isoOrNull } from "./proto-json.js";

const BODY: Spec = {
  change: { type: "object" },
  from: { type: "string", nullable: true, rules: { pattern: INSTANT_PATTERN } },
  to: { type: "string", nullable: true, rules: { pattern: INSTANT_PATTERN } },
};

export const SIMULATE_BODY_SCHEMA: JsonSchema = specSchema(BODY, {
  required: ["change"],
  refine: { change: guardrailBodySchema([]) },
});

function instant(body: Record<string, unknown>, name: string): Timestamp | undefined {
  const raw = body[name];
  if (raw === undefined || raw === null) return undefined;
  const at = parseInstant(raw as string);
  if (!at) throw badRequest(`${name} must be an ISO 8601 date-time, e.g. 2026-11-26T08:00:00Z`);
  return timestampFromDate(at);
}

/** A simulate body: the change (a PATCH body: its keys are the mask) and the window. */
export function simulateRequestFromJson(body: Record<string, unknown>): {
  change: GuardrailInput;
  paths: string[];
  from?: Timestamp;
  to?: Timestamp;
} {
  checkFields(body, BODY);
  if (body.change === undefined) throw badRequest("change is required (the body a PATCH takes)");
  const { input, paths } = guardrailInputFromJson(body.change as Record<string, unknown>);
  return { change: input, paths, from: instant(body, "from"), to: instant(body, "to") };
}

const REFUSALS = apiEnumOf(ReplayRefusalSchema);

export function simulationToJson(r: SimulateGuardrailResponse) {
  return {
    from: isoOrNull(r.from),
    to: isoOrNull(r.to),
    requests_replayed: Number(r.requestsReplayed),
    outcomes_changed: Number(r.outcomesChanged),
    newly_refused: r.newlyRefused.map((x) => ({
      reason: REFUSALS.name(x.reason),
      count: Number(x.count),
    })),
    newly_allowed: Number(r.newlyAllowed),
    newly_redacted: Number(r.newlyRedacted),
    newly_flagged: Number(r.newlyFlagged),
    spend: r.spend.map((s) => ({
      entity: s.entity,
      subject: s.subject,
      recorded_usd: s.recordedUsd,
      replayed_usd: s.replayedUsd,
    })),
    affected_generation_ids: r.affectedGenerationIds,
    not_replayed: r.notReplayed.map((u) => ({ field: u.field, reason: u.reason })),
    // Per content-filter field the change touches: from what each request was decided.
    content_replay: r.contentReplay.map((c) => ({
      field: c.field,
      from_detections: Number(c.fromDetections),
      from_encrypted_input: Number(c.fromEncryptedInput),
      not_replayed: Number(c.notReplayed),
      reason: c.reason || null,
    })),
  };
}

type SimulationJson = ReturnType<typeof simulationToJson>;

export const SIMULATION_JSON_SCHEMA: JsonSchema = shapeOf<SimulationJson>({
  from: DATE_TIME,
  to: DATE_TIME,
  requests_replayed: INTEGER,
  outcomes_changed: INTEGER,
  newly_refused: arrayOf(
    shapeOf<SimulationJson["newly_refused"][number]>({
      reason: { type: "string", enum: [...REFUSALS.names] },
      count: INTEGER,
    }),
  ),
  newly_allowed: INTEGER,
  newly_redacted: INTEGER,
  newly_flagged: INTEGER,
  spend: arrayOf(
    shapeOf<SimulationJson["spend"][number]>({
      entity: { type: "string", enum: ["key", "member"] },
      subject: STRING,
      recorded_usd: NUMBER,
      replayed_usd: NUMBER,
    }),
  ),
  affected_generation_ids: STRINGS,
  not_replayed: arrayOf(
    shapeOf<SimulationJson["not_replayed"][number]>({ field: STRING, reason: STRING }),
  ),
  content_replay: arrayOf(
    shapeOf<SimulationJson["content_replay"][number]>({
      // A policy's settings are under config (a guardrail's are not).
      field: {
        type: "string",
        enum: [
          "content_filter_builtins",
          "content_filters",
          "config.content_filter_builtins",
          "config.content_filters",
        ],
      },
      from_detections: INTEGER,
      from_encrypted_input: INTEGER,
      not_replayed: INTEGER,
      reason: orNull(STRING),
    }),
  ),
});
