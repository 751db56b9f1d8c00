import {
  type Guardrail,
  type GuardrailInput,
  GuardrailInputSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { GUARDRAIL_FIELDS } from "../../services/guardrail/field-table.js";
import {
  arrayOf,
  BOOLEAN,
  DATE_TIME,
  type JsonSchema,
  NUMBER,
  orNull,
  STRING,
  STRINGS,
} from "../openapi/spec-schema.js";
import { filterActions, regions, resetIntervals, scanScopes } from "./enums.js";
import { type JsonOverrides, ProtoJson } from "./proto-json.js";

export { isoOrNull } from "./proto-json.js";

/**
 * Where the guardrail's JSON is not what its proto fields give (see
 * proto-json.ts for what they give): the JSON shape only. The rules on
 * values (lengths, required fields, enums the protobuf allows but the API
 * does not, the update mask) are the service's (request-rules.ts), so gRPC
 * callers get the very same answers.
 */
export const GUARDRAIL_JSON_OVERRIDES: JsonOverrides = {
  // Every field may be null (OpenRouter documents them so), except these.
  "GuardrailInput.name": { nonNull: true },
  "BuiltinFilter.slug": { nonNull: true },
  "BuiltinFilter.action": { nonNull: true },
  "CustomFilter.pattern": { nonNull: true },
  "CustomFilter.action": { nonNull: true },
  // Fixed per slug: the service sets it, whatever a client echoes back.
  "BuiltinFilter.label": { ignoredOnInput: true },
  // Only the scoped builtin has a scan scope; the others show none, not null.
  "BuiltinFilter.scan_scope": { output: "omit-unset" },
  // Empty means the default placeholder, which the API writes as null.
  "CustomFilter.label": { output: "empty-as-null" },
};

const json = new ProtoJson(GUARDRAIL_JSON_OVERRIDES);

type Json = Record<string, unknown>;

/**
 * JSON body -> GuardrailInput plus the list of fields present (the update
 * mask). A field sent as null is present with no value; an omitted field is
 * absent from the mask.
 */
export function guardrailInputFromJson(body: Json): { input: GuardrailInput; paths: string[] } {
  const input = json.read<GuardrailInput>(GuardrailInputSchema, body);
  return { input, paths: Object.keys(body) };
}

/** Every field but the internal ones, in proto order. */
const OUTPUT = GUARDRAIL_FIELDS.fields.filter((f) => f.role !== "internal").map((f) => f.field);

/** A deprecated alias is written just before the first field it fills. */
const ALIAS_BEFORE = new Map(GUARDRAIL_FIELDS.aliases.map((a) => [a.fills[0]?.name, a.name]));

/** Guardrail -> the public JSON shape. */
export function guardrailToJson(g: Guardrail): Json {
  const out: Json = {};
  for (const [name, value] of Object.entries(json.write(g, OUTPUT))) {
    const alias = ALIAS_BEFORE.get(name);
    // An alias has no stored value of its own: always null.
    if (alias) out[alias] = null;
    out[name] = value;
  }
  return out;
}

const NULLABLE_STRINGS = orNull(STRINGS);
const NULLABLE_BOOLEAN = orNull(BOOLEAN);
/** What guardrailToJson renders; shapeOf makes a field added there without its schema a compile error. */
export const GUARDRAIL_JSON_SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    id: { type: "string", format: "uuid" },
    name: STRING,
    description: STRING,
    workspace_id: { type: "string", format: "uuid" },
    allowed_data_regions: orNull(arrayOf(orNull({ enum: regions.names }))),
    allowed_models: NULLABLE_STRINGS,
    allowed_providers: NULLABLE_STRINGS,
    ignored_models: NULLABLE_STRINGS,
    ignored_providers: NULLABLE_STRINGS,
    content_filter_builtins: orNull(
      arrayOf({
        type: "object",
        required: ["slug", "action", "label"],
        properties: {
          slug: STRING,
          action: orNull({ enum: filterActions.names }),
          label: STRING,
          scan_scope: { enum: scanScopes.names },
        },
        additionalProperties: false,
      }),
    ),
    content_filters: orNull(
      arrayOf({
        pattern: STRING,
        action: orNull({ enum: filterActions.names }),
        label: orNull(STRING),
      }),
    ),
    enable_free_model_publication: BOOLEAN,
    enable_free_model_training: BOOLEAN,
    enable_paid_model_training: BOOLEAN,
    enforce_zdr: { type: "null", description: "Deprecated: always null; see enforce_zdr_<vendor>" },
    enforce_zdr_anthropic: BOOLEAN,
    enforce_zdr_openai: BOOLEAN,
    enforce_zdr_google: BOOLEAN,
    enforce_zdr_xai: BOOLEAN,
    enforce_zdr_other: BOOLEAN,
    allow_safety_retention_google: NULLABLE_BOOLEAN,
    allow_safety_retention_other: NULLABLE_BOOLEAN,
    include_byok_in_budgets: BOOLEAN,
    limit_usd: orNull(NUMBER),
    reset_interval: orNull({ enum: resetIntervals.names }),
    is_workspace_default: BOOLEAN,
    created_at: orNull(DATE_TIME),
    updated_at: orNull(DATE_TIME),
  },
};

/**
 * The guardrail body's OpenAPI schema, from the same descriptor guardrailInputFromJson reads:
 * `required` for a create (name), none for an update.
 */
export function guardrailBodySchema(required: readonly string[]): JsonSchema {
  return json.schema(GuardrailInputSchema, required);
}
