/** Documented limits of guardrail fields (README "Limits"). */
export const LIMITS = {
  nameMax: 200,
  descriptionMax: 1000,
  listMaxItems: 1000,
  listItemMax: 200,
  customFiltersMax: 100,
  patternMax: 1000,
  labelMax: 100,
  limitUsdMax: 1_000_000_000,
  pageLimitDefault: 50,
  pageLimitMax: 100,
  /** Distinct key hashes or member ids in one assign/unassign call, and a member id's length. */
  subjectsMax: 1000,
  subjectMax: 256,
} as const;
