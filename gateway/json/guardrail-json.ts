import { BUILTIN_SLUGS, SCOPED_BUILTIN } from "../../domain/builtin-filters.js";
import { GUARDRAIL_FIELDS } from "../../domain/guardrail-fields.js";
import { UUID_INPUT_PATTERN } from "../../domain/ids.js";
import { GUARDRAIL_LIMITS as LIMITS } from "../../domain/limits.js";
import {
  type Guardrail,
  type GuardrailCheckRun,
  GuardrailCheckRunSchema,
  type GuardrailInput,
  GuardrailInputSchema,
  GuardrailSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { deepFreeze } from "../../platform/deep-freeze.js";
import type { JsonSchema } from "../openapi/spec-schema.js";
import { badRequest, NOT_BLANK } from "./fields.js";
import { type JsonOverrides, type JsonRules, ProtoJson } from "./proto-json.js";

/** A list restriction: 1 to listMaxItems non-blank strings (null: no restriction). */
const STRING_LIST_RULES: JsonRules = {
  minItems: 1,
  maxItems: LIMITS.listMaxItems,
  items: { minLength: 1, maxLength: LIMITS.listItemMax, pattern: NOT_BLANK },
};

/**
 * Where the guardrail's JSON is not what its proto fields give (see
 * proto-json.ts for what they give), and the rules on values the OpenAPI
 * document states. The rules are the service's (request-rules.ts,
 * validation.ts), built from its constants: the service applies them, so
 * gRPC callers get the very same answers; here they are only stated. Enum
 * names come from the descriptor.
 */
export const GUARDRAIL_JSON_OVERRIDES: JsonOverrides = {
  // Every field may be null (OpenRouter documents them so), except these.
  "GuardrailInput.name": {
    nonNull: true,
    rules: { minLength: 1, maxLength: LIMITS.nameMax, pattern: NOT_BLANK },
  },
  "GuardrailInput.description": { rules: { maxLength: LIMITS.descriptionMax } },
  "GuardrailInput.workspace_id": { rules: { pattern: UUID_INPUT_PATTERN } },
  "GuardrailInput.allowed_data_regions": {
    rules: { minItems: 1, maxItems: LIMITS.listMaxItems },
  },
  "GuardrailInput.allowed_models": { rules: STRING_LIST_RULES },
  "GuardrailInput.allowed_providers": { rules: STRING_LIST_RULES },
  "GuardrailInput.ignored_models": { rules: STRING_LIST_RULES },
  "GuardrailInput.ignored_providers": { rules: STRING_LIST_RULES },
  "GuardrailInput.content_filters": { rules: { maxItems: LIMITS.customFiltersMax } },
  "GuardrailInput.limit_usd": { rules: { minimum: 0, maximum: LIMITS.limitUsdMax } },
  "GuardrailInput.checks": { rules: { maxItems: LIMITS.checksMax } },
  "GuardrailCheck.name": {
    nonNull: true,
    required: true,
    rules: { minLength: 1, maxLength: LIMITS.checkNameMax, pattern: NOT_BLANK },
  },
  "GuardrailCheck.request": { nonNull: true, required: true },
  "GuardrailCheck.expect": { nonNull: true, required: true },
  "GuardrailCheck.reason": { rules: { maxLength: LIMITS.checkReasonMax } },
  "CheckRequest.model": {
    nonNull: true,
    required: true,
    rules: { minLength: 1, maxLength: LIMITS.listItemMax },
  },
  "CheckRequest.input": { rules: { maxLength: LIMITS.checkInputMax } },
  "BuiltinFilter.slug": {
    nonNull: true,
    required: true,
    rules: { enum: [...BUILTIN_SLUGS] },
  },
  "BuiltinFilter.action": { nonNull: true, required: true },
  "CustomFilter.pattern": {
    nonNull: true,
    required: true,
    rules: { minLength: 1, maxLength: LIMITS.patternMax },
  },
  "CustomFilter.action": { nonNull: true, required: true },
  // Fixed per slug: the service sets it, whatever a client echoes back.
  "BuiltinFilter.label": { ignoredOnInput: true },
  // Only the scoped builtin has a scan scope; the others show none, not null.
  "BuiltinFilter.scan_scope": { output: "omit-unset" },
  // Empty means the default placeholder, which the API writes as null.
  "CustomFilter.label": { output: "empty-as-null", rules: { maxLength: LIMITS.labelMax } },
  // The service makes them (ids.ts): say so in the answer's schema.
  "Guardrail.id": { format: "uuid" },
  "Guardrail.workspace_id": { format: "uuid" },
  // The service's working copy of what the shadow decides by: the change says it.
  "GuardrailShadow.proposed": { output: "never" },
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

/**
 * A PATCH body: the guardrail's fields (the mask) and `force`, which is no field but says to
 * apply the change although some of its checks fail.
 */
export function guardrailPatchFromJson(body: Json): {
  input: GuardrailInput;
  paths: string[];
  force: boolean;
} {
  const { force, ...fields } = body;
  if (force !== undefined && typeof force !== "boolean")
    throw badRequest("force must be true or false");
  return { ...guardrailInputFromJson(fields), force: force === true };
}

/** Every field but the internal ones, in proto order. */
const OUTPUT = GUARDRAIL_FIELDS.fields.filter((f) => f.role !== "internal").map((f) => f.field);

/** A deprecated alias is written just before the first field it fills. */
const ALIAS_BEFORE = new Map(GUARDRAIL_FIELDS.aliases.map((a) => [a.fills[0]?.name, a]));

/** An alias has no stored value of its own: always null, just before the first field it fills. */
const NULL_BEFORE = new Map([...ALIAS_BEFORE].map(([field, alias]) => [field ?? "", alias.name]));

/** The JSON of each frozen guardrail written so far (see guardrailToJson), and its answer's text. */
const written = new WeakMap<Guardrail, Json>();
const answers = new WeakMap<Guardrail, string>();

/**
 * Guardrail -> the public JSON shape. A frozen guardrail cannot change: it is one the store
 * shares between reads while its bytes stay the same (Store.readGuardrail), handed over as it
 * is by an in-process call. Its JSON is written once and kept with it (frozen as well, so no
 * caller can change what the next one reads): a GET of an unchanged guardrail writes nothing.
 */
export function guardrailToJson(g: Guardrail): Json {
  if (!Object.isFrozen(g)) return json.write(g, OUTPUT, NULL_BEFORE);
  let out = written.get(g);
  if (!out) {
    out = deepFreeze(json.write(g, OUTPUT, NULL_BEFORE));
    written.set(g, out);
  }
  return out;
}

/**
 * The serialized answer `{ "data": <guardrail JSON or null> }` of a route that returns one
 * guardrail; kept, like its JSON, with a frozen guardrail: a GET of an unchanged guardrail
 * serializes nothing.
 */
export function guardrailAnswerText(g: Guardrail | undefined): string {
  if (!g || !Object.isFrozen(g)) return JSON.stringify({ data: g ? guardrailToJson(g) : g });
  let text = answers.get(g);
  if (text === undefined) {
    text = JSON.stringify({ data: guardrailToJson(g) });
    answers.set(g, text);
  }
  return text;
}

/**
 * What guardrailToJson writes, from the descriptor (ProtoJson.outputSchema) with each alias
 * where guardrailToJson puts it; the field-table test validates its output against this.
 */
export const GUARDRAIL_JSON_SCHEMA: JsonSchema = (() => {
  const derived = json.outputSchema(GuardrailSchema, OUTPUT) as {
    properties: Record<string, JsonSchema>;
    required: string[];
  };
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, schema] of Object.entries(derived.properties)) {
    const alias = ALIAS_BEFORE.get(name);
    if (alias) {
      const fills = alias.fills.map((f) => f.name).join(", ");
      properties[alias.name] = {
        type: "null",
        description: `Deprecated: always null; see ${fills}`,
      };
      required.push(alias.name);
    }
    properties[name] = schema;
    if (derived.required.includes(name)) required.push(name);
  }
  return { ...derived, required, properties };
})();

/**
 * The guardrail body's OpenAPI schema, from the same descriptor guardrailInputFromJson reads:
 * `required` for a create (name), none for an update.
 */
export function guardrailBodySchema(required: readonly string[]): JsonSchema {
  const schema = json.schema(GuardrailInputSchema, required);
  const builtins = (schema.properties as Record<string, JsonSchema>).content_filter_builtins;
  const item = builtins?.items as JsonSchema | undefined;
  // A rule across two fields of one element, which the per-field overrides cannot state: a
  // scan_scope is only taken by the scoped builtin (validation.ts refuses it on the others).
  // The console reads the slug from here rather than keeping its own copy.
  if (item) {
    item.allOf = [
      {
        if: { required: ["scan_scope"], properties: { scan_scope: { type: "string" } } },
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, not a thenable
        then: { properties: { slug: { const: SCOPED_BUILTIN } } },
      },
    ];
  }
  return schema;
}

/** A PATCH's body: the guardrail's fields, and `force`. */
export function guardrailPatchBodySchema(): JsonSchema {
  const schema = guardrailBodySchema([]);
  (schema.properties as Record<string, JsonSchema>).force = {
    type: "boolean",
    description:
      "Apply the change although some of the guardrail's checks fail (audited as forced)",
  };
  return schema;
}

/** A check run as the API writes it (the guardrail's last_check_run, the checks/run answer). */
export function checkRunToJson(run: GuardrailCheckRun): Json {
  return json.write(run, GuardrailCheckRunSchema.fields);
}

export const CHECK_RUN_JSON_SCHEMA: JsonSchema = json.outputSchema(GuardrailCheckRunSchema);

/** A proposed change as its PATCH body was: the fields its mask names, with their values. */
export function guardrailChangeToJson(input: GuardrailInput, paths: readonly string[]): Json {
  const all = json.write(input, GuardrailInputSchema.fields);
  return Object.fromEntries(paths.map((p) => [p, all[p] ?? null]));
}
