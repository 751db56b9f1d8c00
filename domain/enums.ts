import {
  type KeyLimitReset,
  KeyLimitResetSchema,
  type ReplayData,
  ReplayDataSchema,
} from "../gen/railgate/account/v1/account_pb.js";
import {
  type CheckOutcome,
  CheckOutcomeSchema,
  FilterAction,
  FilterActionSchema,
  type Region,
  RegionSchema,
  type ResetInterval,
  ResetIntervalSchema,
  type ScanScope,
  ScanScopeSchema,
} from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type GenerationStatus,
  GenerationStatusSchema,
  type RoutingOutcome,
  RoutingOutcomeSchema,
} from "../gen/railgate/speech/v1/speech_pb.js";
import {
  type BreakerState,
  BreakerStateSchema,
  type BudgetScope,
  BudgetScopeSchema,
  type GuardrailSource,
  GuardrailSourceSchema,
} from "../gen/railgate/speech/v1/speech_service_pb.js";
import { type EnumApiName, enumNames } from "../platform/enum-names.js";

/**
 * The API names of Railgate's proto enums, one table each. The proto enum is each one's only
 * definition: its values' names in lower case ("REGION_EUROPE" -> "europe") are what the JSON
 * API, the configuration and the records use, so a value added to the proto reaches every
 * surface, and the types below make each place that keys something by one of them name it.
 */

/**
 * The ingress regions (railgate.guardrail.v1.Region), one gateway listener each: policy, the
 * caller authentication and the gateway's listeners key things by them.
 */
export type RegionName = EnumApiName<typeof Region>;

const REGIONS = enumNames<typeof Region>(RegionSchema);

/** Every region, in the proto's order. */
export const REGION_NAMES: readonly RegionName[] = REGIONS.names;

export function isRegionName(s: string): s is RegionName {
  return REGIONS.is(s);
}

/** The name of an enum value, or undefined for UNSPECIFIED and numbers no region has. */
export function regionName(value: Region): RegionName | undefined {
  return REGIONS.name(value);
}

export function regionValue(name: RegionName): Region {
  return REGIONS.value(name);
}

/** The names quoted for a message: `"global", "europe", "us"`, or `... "europe" or "us"`. */
export function quotedRegionNames(lastSeparator: ", " | " or " = ", "): string {
  const quoted = REGION_NAMES.map((n) => `"${n}"`);
  return `${quoted.slice(0, -1).join(", ")}${lastSeparator}${quoted.at(-1)}`;
}

/**
 * A guardrail's reset_interval (railgate.guardrail.v1.ResetInterval) and its API names
 * ("daily", "weekly", "monthly"). The same names are the calendar windows spend is counted
 * in (domain/windows.ts), which a key's limit_reset uses too (KEY_LIMIT_RESETS below).
 */
export type ResetIntervalName = EnumApiName<typeof ResetInterval>;

export const RESET_INTERVALS = enumNames<typeof ResetInterval>(ResetIntervalSchema);

/**
 * A key's limit_reset (railgate.account.v1.KeyLimitReset) as the API spells it (OpenRouter's
 * values: "daily", "weekly", "monthly"). Its windows are the budget windows (domain/windows.ts),
 * which are named by the reset intervals: the type checker holds the two enums to the same
 * names, since a window is chosen by name.
 */
export type KeyLimitResetName = EnumApiName<typeof KeyLimitReset>;

export const KEY_LIMIT_RESETS = enumNames<typeof KeyLimitReset>(KeyLimitResetSchema);

/**
 * The window a key's limit is checked in: the budget window of the same name; undefined for an
 * all-time limit. Typed as a window, so a limit_reset the windows do not have fails to compile.
 */
export function keyLimitWindow(v: KeyLimitReset | undefined): ResetIntervalName | undefined {
  return KEY_LIMIT_RESETS.name(v);
}

/** What a content filter does on a match (railgate.guardrail.v1.FilterAction): "block", "redact", "flag". */
export type FilterActionName = EnumApiName<typeof FilterAction>;

export const FILTER_ACTIONS = enumNames<typeof FilterAction>(FilterActionSchema);

/**
 * What a filter of each action did, as the generations list's `outcome` filter names it: the
 * past tense of the action, so not derived from the enum but written here once, beside it.
 */
const ACTION_OF_OUTCOME = {
  blocked: FilterAction.BLOCK,
  redacted: FilterAction.REDACT,
  flagged: FilterAction.FLAG,
} as const satisfies Record<string, Exclude<FilterAction, FilterAction.UNSPECIFIED>>;

export type FilterOutcomeName = keyof typeof ACTION_OF_OUTCOME;

export const FILTER_OUTCOMES = {
  /** "blocked", "redacted", "flagged". */
  names: Object.keys(ACTION_OF_OUTCOME) as FilterOutcomeName[],
  value: (name: FilterOutcomeName): FilterAction => ACTION_OF_OUTCOME[name],
} as const;

/** Which text a scoped builtin filter scans (railgate.guardrail.v1.ScanScope): "user_only", "all_messages". */
export type ScanScopeName = EnumApiName<typeof ScanScope>;

export const SCAN_SCOPES = enumNames<typeof ScanScope>(ScanScopeSchema);

/**
 * An endpoint's circuit breaker (railgate.speech.v1.BreakerState) and its API names: "closed"
 * (serving), "open" (skipped), "half_open" (one probe in flight). The breakers keep their state
 * by these names; explain carries the enum and its JSON writes the name.
 */
export type BreakerStateName = EnumApiName<typeof BreakerState>;

export const BREAKER_STATES = enumNames<typeof BreakerState>(BreakerStateSchema);

/**
 * Which budget layer a spend counter is (railgate.speech.v1.BudgetScope), named as OpenRouter's
 * KeyBudgetScope: "workspace_default_member", "workspace_default_key", "member", "api_key".
 * Admission, the budget alerts and explain's JSON use these names (governance/policy/
 * budget-counters.ts); explain's proto carries the enum.
 */
export type BudgetScopeName = EnumApiName<typeof BudgetScope>;

export const BUDGET_SCOPES = enumNames<typeof BudgetScope>(BudgetScopeSchema);

/**
 * How a guardrail governs a key (railgate.speech.v1.GuardrailSource) and its API names: "key",
 * "member", "workspace_default". The policy keeps each governing guardrail's source by name
 * (governance/policy/types.ts); explain carries the enum and its JSON writes the name.
 */
export type GuardrailSourceName = EnumApiName<typeof GuardrailSource>;

export const GUARDRAIL_SOURCES = enumNames<typeof GuardrailSource>(GuardrailSourceSchema);

/**
 * What routing did with one endpoint of a request (railgate.speech.v1.RoutingOutcome) and its
 * API names: "served", "failed", "skipped", "not_tried". The generation record's routing and
 * explain's JSON (and the CLI's generation record) write these names.
 */
export type RoutingOutcomeName = EnumApiName<typeof RoutingOutcome>;

export const ROUTING_OUTCOMES = enumNames<typeof RoutingOutcome>(RoutingOutcomeSchema);

/**
 * How a generation ended (railgate.speech.v1.GenerationStatus) and its API names: "completed",
 * "failed", "cancelled", "refused" when it never started (a rule, a blocking filter, admission
 * or routing refused it), or "unavailable" when it never started because the store was not
 * answering (a 503, not a decision). Records carry the enum; the generation JSON, the list's
 * status filter and the request log's status column (text, so its SQL and indexes read names)
 * read and write these names through this one table.
 */
export type GenerationStatusName = EnumApiName<typeof GenerationStatus>;

export const GENERATION_STATUSES = enumNames<typeof GenerationStatus>(GenerationStatusSchema);

/**
 * The status a refused request's record is given: refused by a rule, or failed at every
 * endpoint (a store outage makes either "unavailable": refusal-record.ts).
 */
export type RefusalStatus = GenerationStatus.REFUSED | GenerationStatus.FAILED;

/** The statuses of requests that never reached a provider: no audio, no usage, no timings. */
export const NEVER_SERVED: readonly GenerationStatusName[] = ["refused", "unavailable"];

/** What a guardrail does with a check's example request: "allowed", "refused", "redacted", "flagged". */
export type CheckOutcomeName = EnumApiName<typeof CheckOutcome>;

export const CHECK_OUTCOMES = enumNames<typeof CheckOutcome>(CheckOutcomeSchema);

/**
 * What a workspace's records keep for a what-if replay of content filters
 * (railgate.account.v1.ReplayData): "none", "detections", "encrypted_input".
 */
export type ReplayDataName = EnumApiName<typeof ReplayData>;

export const REPLAY_DATA_MODES = enumNames<typeof ReplayData>(ReplayDataSchema);
