export { CompiledFilters } from "./compiled-filters.js";
export { applyFilters, closeFilterWorkers, filterRuns } from "./off-thread.js";
export { SharedCompiledFilters, sharedCompiledFilters } from "./shared-compiled.js";
export type {
  FilterActionName,
  FilterOutcome,
  FilterResult,
  FilterRule,
  TextPart,
} from "./types.js";
