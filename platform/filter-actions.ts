import { FilterAction, FilterActionSchema } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import { type EnumApiName, enumNames } from "./enum-names.js";

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
