import { BUILTIN_SLUGS, SCOPED_BUILTIN } from "../../domain/builtin-filters.js";
import { CompiledFilters } from "../filters/compiled-filters.js";
import { applyFilters } from "../filters/off-thread.js";
import type { FilterActionName, FilterResult, FilterRule, TextPart } from "../filters/types.js";

/**
 * How often each builtin detector matched a request's text, by slug; a slug that found nothing
 * is absent (no match at all: `{}`). Prompt injection scoped to the user's own text has its own
 * entry, USER_ONLY_KEY, when that count differs (the request carried delivery instructions).
 */
export type Detections = Record<string, number>;

/** The detections key of regex-prompt-injection's matches in user text alone. */
export const USER_ONLY_KEY = `${SCOPED_BUILTIN}/user_only`;

/** Every builtin, flagging: one pass over the text reports each detector's matches. */
let everyBuiltin: CompiledFilters | undefined;
let userOnly: CompiledFilters | undefined;

function compiled(): { every: CompiledFilters; userOnly: CompiledFilters } {
  everyBuiltin ??= CompiledFilters.compile(
    BUILTIN_SLUGS.map((slug): FilterRule => ({ slug, action: "flag", label: "" })),
  );
  userOnly ??= CompiledFilters.compile([
    { slug: SCOPED_BUILTIN, action: "flag", label: "", scanScope: "user_only" },
  ]);
  return { every: everyBuiltin, userOnly };
}

/**
 * Runs every builtin detector over the request's text, whatever its guardrails enable, with
 * the filters' own scheduling (inline when cheap, else on a filter thread): called once the
 * request's answer is decided, its result waits only for the request log's batch.
 */
export async function detectBuiltins(parts: TextPart[]): Promise<Detections> {
  const sets = compiled();
  const found: Detections = {};
  const every = await applyFilters(sets.every, parts);
  for (const o of every.outcomes) found[o.slug] = o.count;
  // Only delivery instructions make the user-only count differ: most requests have none.
  if (parts.some((p) => p.role !== "user") && (found[SCOPED_BUILTIN] ?? 0) > 0) {
    const user = await applyFilters(sets.userOnly, parts);
    const count = user.outcomes[0]?.count ?? 0;
    if (count !== found[SCOPED_BUILTIN]) found[USER_ONLY_KEY] = count;
  }
  return found;
}

/** A request's content outcome, strongest first: what decides it. */
export type ContentOutcome = "blocked" | "redacted" | "flagged" | "allowed";

const OUTCOME_OF: Readonly<Record<FilterActionName, ContentOutcome>> = {
  block: "blocked",
  redact: "redacted",
  flag: "flagged",
};
const RANK: Readonly<Record<ContentOutcome, number>> = {
  allowed: 0,
  flagged: 1,
  redacted: 2,
  blocked: 3,
};

/** The stronger of two outcomes. */
export function stronger(a: ContentOutcome, b: ContentOutcome): ContentOutcome {
  return RANK[a] >= RANK[b] ? a : b;
}

/**
 * What `rules`' builtins decide for a request from its detections: where matches of different
 * actions overlap the strongest applies, so a request's outcome is the strongest action of a
 * rule that matched at all, exactly as the filters decide it (custom patterns are not in the
 * detections: the caller leaves them out).
 */
export function decideFromDetections(
  rules: readonly Pick<FilterRule, "slug" | "action" | "scanScope">[],
  detections: Detections,
): ContentOutcome {
  let outcome: ContentOutcome = "allowed";
  for (const r of rules) {
    if (r.slug === "custom") continue;
    const key = r.slug === SCOPED_BUILTIN && r.scanScope === "user_only" ? USER_ONLY_KEY : r.slug;
    const count = detections[key] ?? (key === USER_ONLY_KEY ? detections[r.slug] : undefined) ?? 0;
    if (count > 0) outcome = stronger(outcome, OUTCOME_OF[r.action]);
  }
  return outcome;
}

/** What the filters' result decides for a request: a block, else a redaction, else a flag. */
export function outcomeOfFilters(result: FilterResult): ContentOutcome {
  if (result.blockedBy) return "blocked";
  let outcome: ContentOutcome = "allowed";
  for (const o of result.outcomes) outcome = stronger(outcome, OUTCOME_OF[o.action]);
  return outcome;
}
