export { CompiledFilters } from "./compiled-filters.js";
export type {
  FilterActionName,
  FilterOutcome,
  FilterResult,
  FilterRule,
  TextPart,
} from "./types.js";
