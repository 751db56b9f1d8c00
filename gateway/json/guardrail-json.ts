import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import {
  BuiltinFilterListSchema,
  CustomFilterListSchema,
  type Guardrail,
  type GuardrailInput,
  GuardrailInputSchema,
  RegionListSchema,
  ResetInterval,
  StringListSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { UUID_RE } from "../../services/common/ids.js";
import { BUILTIN_FILTER_LABELS } from "../../services/guardrail/builtins.js";
import { LIMITS } from "../../services/guardrail/limits.js";
import {
  arrayOf,
  BOOLEAN,
  DATE_TIME,
  type JsonSchema,
  NUMBER,
  orNull,
  STRING,
  STRINGS,
  shapeOf,
  specSchema,
} from "../openapi/spec-schema.js";
import { filterActions, regions, resetIntervals, scanScopes } from "./enums.js";
import { checkElements, checkFields, NOT_BLANK, type Spec } from "./fields.js";

const LIST = { type: "array", nullable: true } as const;
/** A list restriction: 1 to listMaxItems non-blank strings (null: no restriction). */
const STRING_LIST_RULES = {
  minItems: 1,
  maxItems: LIMITS.listMaxItems,
  items: { type: "string", minLength: 1, maxLength: LIMITS.listItemMax, pattern: NOT_BLANK },
};
const ACTION = { type: "string", rules: { enum: filterActions.names } } as const;
/** Every boolean may be null, as OpenRouter documents: null means the default (or inherit). */
const BOOL = { type: "boolean", nullable: true } as const;

/**
 * Writable guardrail fields and their JSON types: the JSON shape only. The
 * rules on values (lengths, required fields, enums the protobuf allows but
 * the API does not, the update mask) are the service's (request-rules.ts),
 * so gRPC callers get the very same answers.
 */
const GUARDRAIL_SPEC: Spec = {
  name: { type: "string", rules: { minLength: 1, maxLength: LIMITS.nameMax, pattern: NOT_BLANK } },
  description: { type: "string", nullable: true, rules: { maxLength: LIMITS.descriptionMax } },
  workspace_id: { type: "string", nullable: true, rules: { pattern: UUID_RE.source } },
  allowed_data_regions: {
    ...LIST,
    rules: { minItems: 1, maxItems: LIMITS.listMaxItems, items: { enum: regions.names } },
  },
  allowed_models: { ...LIST, rules: STRING_LIST_RULES },
  allowed_providers: { ...LIST, rules: STRING_LIST_RULES },
  ignored_models: { ...LIST, rules: STRING_LIST_RULES },
  ignored_providers: { ...LIST, rules: STRING_LIST_RULES },
  content_filter_builtins: LIST,
  content_filters: { ...LIST, rules: { maxItems: LIMITS.customFiltersMax } },
  enable_free_model_publication: BOOL,
  enable_free_model_training: BOOL,
  enable_paid_model_training: BOOL,
  enforce_zdr: BOOL,
  enforce_zdr_anthropic: BOOL,
  enforce_zdr_openai: BOOL,
  enforce_zdr_google: BOOL,
  enforce_zdr_xai: BOOL,
  enforce_zdr_other: BOOL,
  allow_safety_retention_google: BOOL,
  allow_safety_retention_other: BOOL,
  include_byok_in_budgets: BOOL,
  limit_usd: { type: "number", nullable: true, rules: { minimum: 0, maximum: LIMITS.limitUsdMax } },
  reset_interval: { type: "string", nullable: true, rules: { enum: resetIntervals.names } },
};

const BUILTIN_SPEC: Spec = {
  slug: { type: "string", rules: { enum: Object.keys(BUILTIN_FILTER_LABELS) } },
  action: ACTION,
  label: { type: "string", nullable: true },
  scan_scope: { type: "string", nullable: true, rules: { enum: scanScopes.names } },
};

const CUSTOM_SPEC: Spec = {
  pattern: { type: "string", rules: { minLength: 1, maxLength: LIMITS.patternMax } },
  action: ACTION,
  label: { type: "string", nullable: true, rules: { maxLength: LIMITS.labelMax } },
};

type Json = Record<string, unknown>;

function strings(field: string, v: unknown) {
  if (v === null || v === undefined) return undefined;
  checkElements(field, v as unknown[], "string");
  return create(StringListSchema, { values: v as string[] });
}

function objects(field: string, v: unknown[], spec: Spec): Json[] {
  checkElements(field, v, "object");
  return (v as Json[]).map((item, i) => {
    checkFields(item, spec, `${field}[${i}].`);
    return item;
  });
}

/** An enum by its API name; omitted stays unset, which the service refuses where it is required. */
function enumValue<E>(parse: (v: string, at: string) => E, value: unknown, at: string) {
  return typeof value === "string" ? parse(value, at) : undefined;
}

/**
 * JSON body -> GuardrailInput plus the list of fields present (the update
 * mask). A field sent as null is present with no value; an omitted field is
 * absent from the mask.
 */
export function guardrailInputFromJson(body: Json): { input: GuardrailInput; paths: string[] } {
  checkFields(body, GUARDRAIL_SPEC);
  const b = body as Record<string, never>;
  const input = create(GuardrailInputSchema, {
    name: b.name,
    description: b.description ?? undefined,
    workspaceId: b.workspace_id ?? undefined,
    allowedModels: strings("allowed_models", b.allowed_models),
    allowedProviders: strings("allowed_providers", b.allowed_providers),
    ignoredModels: strings("ignored_models", b.ignored_models),
    ignoredProviders: strings("ignored_providers", b.ignored_providers),
    enableFreeModelPublication: b.enable_free_model_publication ?? undefined,
    enableFreeModelTraining: b.enable_free_model_training ?? undefined,
    enablePaidModelTraining: b.enable_paid_model_training ?? undefined,
    enforceZdr: b.enforce_zdr ?? undefined,
    enforceZdrAnthropic: b.enforce_zdr_anthropic ?? undefined,
    enforceZdrOpenai: b.enforce_zdr_openai ?? undefined,
    enforceZdrGoogle: b.enforce_zdr_google ?? undefined,
    enforceZdrXai: b.enforce_zdr_xai ?? undefined,
    enforceZdrOther: b.enforce_zdr_other ?? undefined,
    allowSafetyRetentionGoogle: b.allow_safety_retention_google ?? undefined,
    allowSafetyRetentionOther: b.allow_safety_retention_other ?? undefined,
    includeByokInBudgets: b.include_byok_in_budgets ?? undefined,
    limitUsd: b.limit_usd ?? undefined,
    resetInterval:
      typeof b.reset_interval === "string"
        ? resetIntervals.parse(b.reset_interval)
        : ResetInterval.UNSPECIFIED,
  });
  const regionList = body.allowed_data_regions as unknown[] | null | undefined;
  if (regionList) {
    checkElements("allowed_data_regions", regionList, "string");
    input.allowedDataRegions = create(RegionListSchema, {
      values: (regionList as string[]).map((r, i) =>
        regions.parse(r, `allowed_data_regions[${i}]`),
      ),
    });
  }
  const builtins = body.content_filter_builtins as unknown[] | null | undefined;
  if (builtins) {
    const items = objects("content_filter_builtins", builtins, BUILTIN_SPEC);
    input.contentFilterBuiltins = create(BuiltinFilterListSchema, {
      values: items.map((f, i) => ({
        slug: (f.slug as string | undefined) ?? "",
        action: enumValue(filterActions.parse, f.action, `content_filter_builtins[${i}].action`),
        scanScope: enumValue(
          scanScopes.parse,
          f.scan_scope,
          `content_filter_builtins[${i}].scan_scope`,
        ),
      })),
    });
  }
  const custom = body.content_filters as unknown[] | null | undefined;
  if (custom) {
    const items = objects("content_filters", custom, CUSTOM_SPEC);
    input.contentFilters = create(CustomFilterListSchema, {
      values: items.map((f, i) => ({
        pattern: (f.pattern as string | undefined) ?? "",
        action: enumValue(filterActions.parse, f.action, `content_filters[${i}].action`),
        label: (f.label as string | null) ?? "",
      })),
    });
  }
  return { input, paths: Object.keys(body) };
}

export function isoOrNull(ts: Timestamp | undefined): string | null {
  return ts ? timestampDate(ts).toISOString() : null;
}

/** Guardrail -> the public JSON shape (enforce_zdr always null: it is deprecated). */
export function guardrailToJson(g: Guardrail) {
  return {
    id: g.id,
    name: g.name,
    description: g.description,
    workspace_id: g.workspaceId,
    allowed_data_regions: g.allowedDataRegions?.values.map((r) => regions.name(r)) ?? null,
    allowed_models: g.allowedModels?.values ?? null,
    allowed_providers: g.allowedProviders?.values ?? null,
    ignored_models: g.ignoredModels?.values ?? null,
    ignored_providers: g.ignoredProviders?.values ?? null,
    content_filter_builtins:
      g.contentFilterBuiltins?.values.map((f) => ({
        slug: f.slug,
        action: filterActions.name(f.action),
        label: f.label,
        ...(scanScopes.name(f.scanScope) ? { scan_scope: scanScopes.name(f.scanScope) } : {}),
      })) ?? null,
    content_filters:
      g.contentFilters?.values.map((f) => ({
        pattern: f.pattern,
        action: filterActions.name(f.action),
        label: f.label || null,
      })) ?? null,
    enable_free_model_publication: g.enableFreeModelPublication,
    enable_free_model_training: g.enableFreeModelTraining,
    enable_paid_model_training: g.enablePaidModelTraining,
    enforce_zdr: null,
    enforce_zdr_anthropic: g.enforceZdrAnthropic,
    enforce_zdr_openai: g.enforceZdrOpenai,
    enforce_zdr_google: g.enforceZdrGoogle,
    enforce_zdr_xai: g.enforceZdrXai,
    enforce_zdr_other: g.enforceZdrOther,
    allow_safety_retention_google: g.allowSafetyRetentionGoogle ?? null,
    allow_safety_retention_other: g.allowSafetyRetentionOther ?? null,
    include_byok_in_budgets: g.includeByokInBudgets,
    limit_usd: g.limitUsd ?? null,
    reset_interval: resetIntervals.name(g.resetInterval),
    is_workspace_default: g.isWorkspaceDefault,
    created_at: isoOrNull(g.createdAt),
    updated_at: isoOrNull(g.updatedAt),
  };
}

const STRING_LIST = { type: "array", items: { type: "string" } };

const NULLABLE_STRINGS = orNull(STRINGS);
const NULLABLE_BOOLEAN = orNull(BOOLEAN);

/** What guardrailToJson renders; shapeOf makes a field added there without its schema a compile error. */
export const GUARDRAIL_JSON_SCHEMA: JsonSchema = shapeOf<ReturnType<typeof guardrailToJson>>({
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
    arrayOf(
      shapeOf<{ pattern: unknown; action: unknown; label: unknown }>({
        pattern: STRING,
        action: orNull({ enum: filterActions.names }),
        label: orNull(STRING),
      }),
    ),
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
});

/**
 * The guardrail body's OpenAPI schema, from the same tables guardrailInputFromJson checks:
 * `required` for a create (name), none for an update.
 */
export function guardrailBodySchema(required: readonly string[]): JsonSchema {
  return specSchema(GUARDRAIL_SPEC, {
    required,
    refine: {
      allowed_data_regions: STRING_LIST,
      allowed_models: STRING_LIST,
      allowed_providers: STRING_LIST,
      ignored_models: STRING_LIST,
      ignored_providers: STRING_LIST,
      content_filter_builtins: {
        type: "array",
        items: specSchema(BUILTIN_SPEC, { required: ["slug", "action"] }),
      },
      content_filters: {
        type: "array",
        items: specSchema(CUSTOM_SPEC, { required: ["pattern", "action"] }),
      },
    },
  });
}
