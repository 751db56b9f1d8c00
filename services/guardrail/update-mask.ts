import { clone, create } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import {
  BuiltinFilterListSchema,
  type Guardrail,
  type GuardrailInput,
  GuardrailSchema,
  ScanScope,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { builtinEntry, SCOPED_BUILTIN } from "../../governance/filters/builtin-table.js";

/** Per-vendor ZDR flags; the deprecated enforce_zdr fills in the ones a request leaves out. */
const ZDR_FIELDS = [
  ["enforce_zdr_anthropic", "enforceZdrAnthropic"],
  ["enforce_zdr_openai", "enforceZdrOpenai"],
  ["enforce_zdr_google", "enforceZdrGoogle"],
  ["enforce_zdr_xai", "enforceZdrXai"],
  ["enforce_zdr_other", "enforceZdrOther"],
] as const;

/** Wrapper-list fields: null (unset) is a value of its own. */
const LIST_FIELDS = {
  allowed_data_regions: "allowedDataRegions",
  allowed_models: "allowedModels",
  allowed_providers: "allowedProviders",
  ignored_models: "ignoredModels",
  ignored_providers: "ignoredProviders",
  content_filter_builtins: "contentFilterBuiltins",
  content_filters: "contentFilters",
} as const;

/**
 * Booleans that are never unset once stored: a client's null (OpenRouter
 * documents them as nullable) means "the default", which is false.
 */
const BOOL_FIELDS = {
  enable_free_model_publication: "enableFreeModelPublication",
  enable_free_model_training: "enableFreeModelTraining",
  enable_paid_model_training: "enablePaidModelTraining",
  include_byok_in_budgets: "includeByokInBudgets",
  ...Object.fromEntries(ZDR_FIELDS),
} as const;

/** Optional booleans: null means "inherit the account setting". */
const NULLABLE_BOOL_FIELDS = {
  allow_safety_retention_google: "allowSafetyRetentionGoogle",
  allow_safety_retention_other: "allowSafetyRetentionOther",
} as const;

export const UPDATABLE_PATHS: ReadonlySet<string> = new Set([
  "name",
  "description",
  "enforce_zdr",
  "limit_usd",
  "reset_interval",
  ...Object.keys(LIST_FIELDS),
  ...Object.keys(BOOL_FIELDS),
  ...Object.keys(NULLABLE_BOOL_FIELDS),
]);

/**
 * Builtin labels are fixed per slug: whatever a client sent is replaced. The
 * scoped builtin's scan_scope defaults to all_messages, stored as such. An
 * empty filter list means "no filters", as null does: it is stored as null,
 * so "none" has one representation.
 */
function withFilterDefaults(g: Guardrail): Guardrail {
  if (g.contentFilters?.values.length === 0) g.contentFilters = undefined;
  if (g.contentFilterBuiltins?.values.length === 0) g.contentFilterBuiltins = undefined;
  if (g.contentFilterBuiltins) {
    g.contentFilterBuiltins = create(BuiltinFilterListSchema, {
      values: g.contentFilterBuiltins.values.map((b) => ({
        ...b,
        label: builtinEntry(b.slug)?.label ?? "",
        scanScope:
          b.slug === SCOPED_BUILTIN && b.scanScope === ScanScope.UNSPECIFIED
            ? ScanScope.ALL_MESSAGES
            : b.scanScope,
      })),
    });
  }
  return g;
}

/**
 * Applies the fields named in `paths` (snake_case JSON names) from `input`
 * onto a copy of `current`. A path whose value is unset in `input` means the
 * client sent null: lists and nullable fields become null, booleans take
 * their default. Paths not named are left exactly as they were. The request
 * rules (request-rules.ts) have already refused unknown paths, a null name
 * and fields set outside the mask.
 */
export function applyUpdateMask(
  current: Guardrail,
  input: GuardrailInput,
  paths: readonly string[],
  now: Timestamp,
): Guardrail {
  const next = clone(GuardrailSchema, current);
  const named = new Set(paths);
  if (named.has("name") && input.name !== undefined) next.name = input.name;
  if (named.has("description")) next.description = input.description ?? "";
  for (const [path, prop] of Object.entries(LIST_FIELDS)) {
    if (named.has(path)) (next as Record<string, unknown>)[prop] = input[prop];
  }
  for (const [path, prop] of Object.entries(BOOL_FIELDS)) {
    if (named.has(path)) next[prop] = input[prop] ?? false;
  }
  for (const [path, prop] of Object.entries(NULLABLE_BOOL_FIELDS)) {
    if (named.has(path)) next[prop] = input[prop];
  }
  // A per-vendor flag sent as null was not set explicitly: enforce_zdr fills it too.
  if (named.has("enforce_zdr") && input.enforceZdr !== undefined) {
    for (const [path, prop] of ZDR_FIELDS) {
      if (!named.has(path) || input[prop] === undefined) next[prop] = input.enforceZdr;
    }
  }
  if (named.has("limit_usd")) next.limitUsd = input.limitUsd;
  if (named.has("reset_interval")) next.resetInterval = input.resetInterval;
  next.updatedAt = now;
  return withFilterDefaults(next);
}

/**
 * The stored guardrail fields (proto names) that applyUpdateMask with these
 * paths writes: the store overwrites exactly these, and nothing else, so
 * PATCHes of different fields never touch each other's.
 */
export function fieldsWritten(input: GuardrailInput, paths: readonly string[]): string[] {
  const out = new Set<string>(["updated_at"]);
  for (const path of paths) {
    if (path !== "enforce_zdr") out.add(path);
    else if (input.enforceZdr !== undefined) {
      for (const [vendor] of ZDR_FIELDS) if (!paths.includes(vendor)) out.add(vendor);
    }
  }
  return [...out];
}

/** A new guardrail from a create request; omitted fields take their defaults. */
export function guardrailFromInput(
  input: GuardrailInput,
  id: string,
  workspaceId: string,
  now: Timestamp,
): Guardrail {
  const zdr = (v: boolean | undefined) => v ?? input.enforceZdr ?? false;
  return withFilterDefaults(
    create(GuardrailSchema, {
      id,
      workspaceId,
      name: input.name ?? "",
      description: input.description ?? "",
      allowedDataRegions: input.allowedDataRegions,
      allowedModels: input.allowedModels,
      allowedProviders: input.allowedProviders,
      ignoredModels: input.ignoredModels,
      ignoredProviders: input.ignoredProviders,
      contentFilterBuiltins: input.contentFilterBuiltins,
      contentFilters: input.contentFilters,
      enableFreeModelPublication: input.enableFreeModelPublication ?? false,
      enableFreeModelTraining: input.enableFreeModelTraining ?? false,
      enablePaidModelTraining: input.enablePaidModelTraining ?? false,
      enforceZdrAnthropic: zdr(input.enforceZdrAnthropic),
      enforceZdrOpenai: zdr(input.enforceZdrOpenai),
      enforceZdrGoogle: zdr(input.enforceZdrGoogle),
      enforceZdrXai: zdr(input.enforceZdrXai),
      enforceZdrOther: zdr(input.enforceZdrOther),
      allowSafetyRetentionGoogle: input.allowSafetyRetentionGoogle,
      allowSafetyRetentionOther: input.allowSafetyRetentionOther,
      includeByokInBudgets: input.includeByokInBudgets ?? false,
      limitUsd: input.limitUsd,
      resetInterval: input.resetInterval,
      createdAt: now,
    }),
  );
}
