export { CompiledFilters } from "./compiled-filters.js";
export { applyFilters, closeFilterWorkers, filterRuns, INLINE_MAX_MICROS } from "./off-thread.js";
export { SharedCompiledFilters, sharedCompiledFilters } from "./shared-compiled.js";
export type {
  Blocked,
  FilterActionName,
  FilterOutcome,
  FilterResult,
  FilterRule,
  TextPart,
} from "./types.js";
