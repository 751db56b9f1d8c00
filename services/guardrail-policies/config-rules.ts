import { BUILTIN_SLUGS, isBuiltinSlug } from "../../domain/builtin-filters.js";
import {
  FILTER_ACTIONS,
  isRegionName,
  quotedRegionNames,
  RESET_INTERVALS,
} from "../../domain/enums.js";
import { GUARDRAIL_LIMITS as LIMITS } from "../../domain/limits.js";
import { patternProblem } from "../../governance/filters/pattern.js";
import { quote } from "../../platform/quote.js";
import { invalidArgument } from "../../platform/rpc/errors.js";
import type { PolicyType } from "../../store/policies/types.js";

type Config = Record<string, unknown>;
type Rule = (at: string, value: unknown) => void;

function fail(message: string): never {
  throw invalidArgument(message);
}

const bool: Rule = (at, v) => {
  if (typeof v !== "boolean") fail(`${at} must be a boolean`);
};

/** A list of non-empty strings; empty is refused as the guardrail refuses it (omit it for no restriction). */
const stringList: Rule = (at, v) => {
  if (!Array.isArray(v)) fail(`${at} must be an array of strings`);
  if (v.length === 0) fail(`${at} must have at least 1 element (omit it for no restriction)`);
  if (v.length > LIMITS.listMaxItems)
    fail(`${at} may have at most ${LIMITS.listMaxItems} elements`);
  v.forEach((s, i) => {
    if (typeof s !== "string" || s.trim().length === 0)
      fail(`${at}[${i}] must be a non-empty string`);
    if (s.length > LIMITS.listItemMax)
      fail(`${at}[${i}] must be at most ${LIMITS.listItemMax} characters`);
  });
};

const regions: Rule = (at, v) => {
  stringList(at, v);
  (v as string[]).forEach((r, i) => {
    if (!isRegionName(r)) fail(`${at}[${i}] must be one of ${quotedRegionNames()}`);
  });
};

function objectAt(at: string, v: unknown): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) fail(`${at} must be an object`);
  return v as Record<string, unknown>;
}

function action(at: string, v: unknown): void {
  if (typeof v !== "string" || !(FILTER_ACTIONS.names as readonly string[]).includes(v))
    fail(`${at} is required and must be one of ${FILTER_ACTIONS.quoted}`);
}

function label(at: string, v: unknown): void {
  if (v === undefined) return;
  if (typeof v !== "string") fail(`${at} must be a string`);
  if ([...v].length > LIMITS.labelMax) fail(`${at} must be at most ${LIMITS.labelMax} characters`);
}

function onlyFields(at: string, o: Record<string, unknown>, allowed: readonly string[]): void {
  for (const k of Object.keys(o))
    if (!allowed.includes(k)) fail(`${at}.${k} is not a field (allowed: ${allowed.join(", ")})`);
}

const builtins: Rule = (at, v) => {
  if (!Array.isArray(v)) fail(`${at} must be an array`);
  const seen = new Set<string>();
  v.forEach((entry, i) => {
    const e = objectAt(`${at}[${i}]`, entry);
    onlyFields(`${at}[${i}]`, e, ["slug", "action", "label"]);
    const slug = e.slug;
    if (typeof slug !== "string" || !isBuiltinSlug(slug))
      fail(`${at}[${i}].slug must be a builtin filter (one of ${BUILTIN_SLUGS.join(", ")})`);
    if (seen.has(slug)) fail(`${at}[${i}].slug ${quote(slug)} appears more than once`);
    seen.add(slug);
    action(`${at}[${i}].action`, e.action);
    label(`${at}[${i}].label`, e.label);
  });
};

const customFilters: Rule = (at, v) => {
  if (!Array.isArray(v)) fail(`${at} must be an array`);
  if (v.length > LIMITS.customFiltersMax)
    fail(`${at} may have at most ${LIMITS.customFiltersMax} elements`);
  v.forEach((entry, i) => {
    const e = objectAt(`${at}[${i}]`, entry);
    onlyFields(`${at}[${i}]`, e, ["pattern", "action", "label"]);
    const pattern = e.pattern;
    if (typeof pattern !== "string" || pattern.length === 0)
      fail(`${at}[${i}].pattern is required and must be a non-empty regular expression`);
    if (pattern.length > LIMITS.patternMax)
      fail(`${at}[${i}].pattern must be at most ${LIMITS.patternMax} characters`);
    const problem = patternProblem(pattern);
    if (problem) fail(`${at}[${i}].pattern is not a usable regular expression: ${problem}`);
    action(`${at}[${i}].action`, e.action);
    label(`${at}[${i}].label`, e.label);
  });
};

const limitUsd: Rule = (at, v) => {
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > LIMITS.limitUsdMax)
    fail(`${at} must be a number from 0 to ${LIMITS.limitUsdMax}`);
};

const resetInterval: Rule = (at, v) => {
  if (typeof v !== "string" || !(RESET_INTERVALS.names as readonly string[]).includes(v))
    fail(`${at} must be one of ${RESET_INTERVALS.quoted}`);
};

/** Each type's settings: the guardrail's names and rules for the part of a guardrail it holds. */
const RULES: Record<PolicyType, Record<string, Rule>> = {
  budget: {
    limit_usd: limitUsd,
    reset_interval: resetInterval,
    include_byok_in_budgets: bool,
  },
  model_availability: {
    allowed_models: stringList,
    ignored_models: stringList,
    allowed_providers: stringList,
    ignored_providers: stringList,
    allowed_data_regions: regions,
    enforce_zdr: bool,
    enforce_zdr_anthropic: bool,
    enforce_zdr_openai: bool,
    enforce_zdr_google: bool,
    enforce_zdr_xai: bool,
    enforce_zdr_other: bool,
    enable_free_model_training: bool,
    enable_paid_model_training: bool,
    enable_free_model_publication: bool,
    allow_safety_retention_google: bool,
    allow_safety_retention_other: bool,
    require_eu_data_region: bool,
  },
  moderation: {
    content_filter_builtins: builtins,
    content_filters: customFilters,
    content_filter_blocks_requests: bool,
  },
};

export function configFields(type: PolicyType): string[] {
  return Object.keys(RULES[type]);
}

/**
 * Checks a policy's config and answers it as stored (null values dropped: null is "no
 * restriction", as in a guardrail). A budget needs all three of its settings, as OpenRouter's
 * authoring config requires them.
 */
export function checkedConfig(type: PolicyType, config: Config | undefined): Config {
  if (config === undefined) fail("config is required");
  const rules = RULES[type];
  const out: Config = {};
  for (const [k, v] of Object.entries(config)) {
    const rule = rules[k];
    if (!rule)
      fail(
        `config.${k} is not a setting of a ${type} policy (one of ${configFields(type).join(", ")})`,
      );
    if (v === null) continue;
    rule(`config.${k}`, v);
    out[k] = v;
  }
  if (type === "budget") {
    const hasLimit = out.limit_usd !== undefined;
    const hasInterval = out.reset_interval !== undefined;
    if (hasLimit !== hasInterval)
      fail("config.limit_usd and config.reset_interval must be set together (both or neither)");
    if (!hasLimit)
      fail("config.limit_usd and config.reset_interval are required for a budget policy");
    out.include_byok_in_budgets ??= false;
  }
  return out;
}
