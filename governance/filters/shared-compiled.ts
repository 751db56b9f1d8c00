import { CompiledFilters, filterSetKey } from "./compiled-filters.js";
import type { FilterRule } from "./types.js";

export interface SharedCompiledLimits {
  /** Distinct filter sets kept. */
  maxEntries: number;
  /** Sum of the sets' weights (pattern characters plus a fixed cost per rule). */
  maxWeight: number;
}

/** What a compiled rule costs beyond its pattern text (program, DFA cache, detector). */
const RULE_WEIGHT = 200;

function weightOf(rules: readonly FilterRule[]): number {
  return rules.reduce((sum, r) => sum + RULE_WEIGHT + (r.pattern?.length ?? 0), 0);
}

/**
 * Compiled filter sets keyed by the content of their rules, least recently
 * used first out. Every key governed by the same guardrails has the same
 * effective rules, so a thousand keys under one guardrail with 100 patterns
 * share one compilation; a guardrail whose filters change yields other rules,
 * hence a new entry, and the old one ages out. Compiled sets are immutable
 * and safe to share.
 */
export class SharedCompiledFilters {
  private readonly entries = new Map<string, { filters: CompiledFilters; weight: number }>();
  private weight = 0;
  compilations = 0;

  constructor(
    private readonly limits: SharedCompiledLimits = { maxEntries: 512, maxWeight: 4_000_000 },
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The set compiled under `key` (a filterSetKey), if it is still kept. */
  peek(key: string): CompiledFilters | undefined {
    return this.touch(key);
  }

  /** Throws like CompiledFilters.compile; a set that does not compile is not kept. */
  get(rules: readonly FilterRule[], key = filterSetKey(rules)): CompiledFilters {
    const hit = this.touch(key);
    if (hit) return hit;
    const filters = CompiledFilters.compile([...rules]);
    this.compilations++;
    const weight = weightOf(rules);
    this.entries.set(key, { filters, weight });
    this.weight += weight;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.limits.maxEntries && this.weight <= this.limits.maxWeight)
        break;
      if (oldest === key) break;
      this.entries.delete(oldest);
      this.weight -= entry.weight;
    }
    return filters;
  }

  private touch(key: string): CompiledFilters | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    // Map order is insertion order: re-inserting marks it most recently used.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.filters;
  }
}

/** The process's one cache: shared by every principal of every governance cache. */
export const sharedCompiledFilters = new SharedCompiledFilters();
