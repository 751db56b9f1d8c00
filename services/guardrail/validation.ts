import { BUILTIN_SLUGS, isBuiltinSlug, SCOPED_BUILTIN } from "../../domain/builtin-filters.js";
import {
  FILTER_ACTIONS,
  quotedRegionNames,
  RESET_INTERVALS,
  regionName,
  SCAN_SCOPES,
} from "../../domain/enums.js";
import { GUARDRAIL_LIMITS as LIMITS } from "../../domain/limits.js";
import {
  type Guardrail,
  ResetInterval,
  ScanScope,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { validateChecks } from "../../governance/checks/check-validation.js";
import { patternProblem } from "../../governance/filters/pattern.js";
import { quote } from "../../platform/quote.js";
import { invalidArgument } from "../../platform/rpc/errors.js";

function fail(message: string): never {
  throw invalidArgument(message);
}

function checkStringList(field: string, list: { values: string[] } | undefined): void {
  if (!list) return;
  if (list.values.length === 0)
    fail(`${field} must have at least 1 element (use null for no restriction)`);
  if (list.values.length > LIMITS.listMaxItems)
    fail(`${field} may have at most ${LIMITS.listMaxItems} elements`);
  list.values.forEach((v, i) => {
    if (v.trim().length === 0) fail(`${field}[${i}] must be a non-empty string`);
    if (v.length > LIMITS.listItemMax)
      fail(`${field}[${i}] must be at most ${LIMITS.listItemMax} characters`);
  });
}

/**
 * Fields that a rule below reads together. A PATCH that writes some of a
 * group was validated against the others as read; the store applies it only
 * if those are still unchanged, so the rule holds on what is stored.
 */
export const FIELDS_CHECKED_TOGETHER: readonly (readonly string[])[] = [
  ["limit_usd", "reset_interval"],
];

/** The fields a patch writing `written` was validated against without writing them. */
export function fieldsReadTogether(written: readonly string[]): string[] {
  return FIELDS_CHECKED_TOGETHER.filter((group) => group.some((f) => written.includes(f))).flatMap(
    (group) => group.filter((f) => !written.includes(f)),
  );
}

/**
 * Checks a guardrail as it would be stored, so that create and update (after
 * the mask is applied) share every rule, including rules across fields.
 */
export function validateGuardrail(g: Guardrail): void {
  if (g.name.trim().length === 0)
    fail(`name must be 1 to ${LIMITS.nameMax} characters and not blank`);
  if ([...g.name].length > LIMITS.nameMax) fail(`name must be 1 to ${LIMITS.nameMax} characters`);
  if ([...g.description].length > LIMITS.descriptionMax) {
    fail(`description must be at most ${LIMITS.descriptionMax} characters`);
  }
  const regions = g.allowedDataRegions;
  if (regions) {
    if (regions.values.length === 0) {
      fail("allowed_data_regions must have at least 1 element (use null for no restriction)");
    }
    if (regions.values.length > LIMITS.listMaxItems) {
      fail(`allowed_data_regions may have at most ${LIMITS.listMaxItems} elements`);
    }
    regions.values.forEach((r, i) => {
      if (regionName(r) === undefined) {
        fail(`allowed_data_regions[${i}] must be one of ${quotedRegionNames()}`);
      }
    });
  }
  checkStringList("allowed_models", g.allowedModels);
  checkStringList("allowed_providers", g.allowedProviders);
  checkStringList("ignored_models", g.ignoredModels);
  checkStringList("ignored_providers", g.ignoredProviders);

  // An empty filter list is "no filters" (stored as null, see update-mask.ts).
  const builtins = g.contentFilterBuiltins;
  if (builtins) {
    const seen = new Set<string>();
    builtins.values.forEach((b, i) => {
      const at = `content_filter_builtins[${i}]`;
      if (b.slug.length === 0) fail(`${at}.slug is required`);
      if (!isBuiltinSlug(b.slug)) {
        fail(
          `${at}.slug ${quote(b.slug)} is not a builtin filter (one of ${BUILTIN_SLUGS.join(", ")})`,
        );
      }
      if (seen.has(b.slug)) fail(`${at}.slug ${quote(b.slug)} appears more than once`);
      seen.add(b.slug);
      if (FILTER_ACTIONS.name(b.action) === undefined) {
        fail(`${at}.action is required and must be one of ${FILTER_ACTIONS.quoted}`);
      }
      // Enum values a protobuf client may send that no name stands for are refused, as the
      // gateway refuses an unknown string: both surfaces store only what the API defines.
      if (b.scanScope !== ScanScope.UNSPECIFIED && SCAN_SCOPES.name(b.scanScope) === undefined) {
        fail(`${at}.scan_scope must be one of ${SCAN_SCOPES.quoted}`);
      }
      if (b.scanScope !== ScanScope.UNSPECIFIED && b.slug !== SCOPED_BUILTIN) {
        fail(`${at}.scan_scope is only supported by "${SCOPED_BUILTIN}"`);
      }
    });
  }

  const custom = g.contentFilters;
  if (custom) {
    if (custom.values.length > LIMITS.customFiltersMax) {
      fail(`content_filters may have at most ${LIMITS.customFiltersMax} elements`);
    }
    custom.values.forEach((f, i) => {
      const at = `content_filters[${i}]`;
      if (f.pattern.length === 0)
        fail(`${at}.pattern is required and must be a non-empty regular expression`);
      if (f.pattern.length > LIMITS.patternMax)
        fail(`${at}.pattern must be at most ${LIMITS.patternMax} characters`);
      const problem = patternProblem(f.pattern);
      if (problem) fail(`${at}.pattern is not a usable regular expression: ${problem}`);
      if (FILTER_ACTIONS.name(f.action) === undefined) {
        fail(`${at}.action is required and must be one of ${FILTER_ACTIONS.quoted}`);
      }
      if ([...f.label].length > LIMITS.labelMax)
        fail(`${at}.label must be at most ${LIMITS.labelMax} characters`);
    });
  }

  if (
    g.resetInterval !== ResetInterval.UNSPECIFIED &&
    RESET_INTERVALS.name(g.resetInterval) === undefined
  ) {
    fail(`reset_interval must be one of ${RESET_INTERVALS.quoted} or null`);
  }
  const hasLimit = g.limitUsd !== undefined;
  const hasInterval = g.resetInterval !== ResetInterval.UNSPECIFIED;
  if (hasLimit !== hasInterval) {
    fail("limit_usd and reset_interval must be set together (both or neither)");
  }
  if (g.limitUsd !== undefined) {
    if (!Number.isFinite(g.limitUsd) || g.limitUsd < 0 || g.limitUsd > LIMITS.limitUsdMax) {
      fail(`limit_usd must be a number from 0 to ${LIMITS.limitUsdMax}`);
    }
  }
  validateChecks(g.checks);
}
