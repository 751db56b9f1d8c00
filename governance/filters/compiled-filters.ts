import { createHash } from "node:crypto";
import { DEFAULT_BLOCK_LABEL, DEFAULT_REDACT_LABEL, SCOPED_BUILTIN } from "./builtin-table.js";
import { BUILTIN_FILTERS } from "./detectors/builtins.js";
import { compilePattern, customPatternDetector } from "./detectors/custom-pattern.js";
import type { Detector, Span } from "./detectors/detector.js";
import { appliedHits, type Hit, redact, STRENGTH } from "./resolve-hits.js";
import type {
  Blocked,
  FilterActionName,
  FilterOutcome,
  FilterResult,
  FilterRule,
  TextPart,
} from "./types.js";

/**
 * Cost of scanning one character with a custom pattern, in microseconds
 * (builtins carry their own, see detectors/builtins.ts): priced at its worst
 * case, one visit per instruction of its program per character (see
 * linear-scan.ts), about 40 ns each. Most patterns cost far less, but the
 * estimate decides whether work may stay on the event loop, so it must not be
 * exceeded.
 */
const CUSTOM_MICROS_PER_INSTRUCTION = 0.04;

interface CompiledRule {
  slug: string;
  action: FilterActionName;
  label: string;
  /** What a block message names (see Blocked). */
  name: string;
  detector: Detector;
  userOnly: boolean;
  /** Estimated microseconds to scan one character (see CompiledFilters.microsPerChar). */
  microsPerChar: number;
  /** Rules with the same slug, label and action report as one outcome. */
  outcome: number;
}

interface RuleHit extends Hit {
  rule: CompiledRule;
  label: string;
  /** The detector's name for the pattern that matched, when it names them. */
  pattern?: string;
}

function labelOf(rule: FilterRule): string {
  const builtin = BUILTIN_FILTERS.get(rule.slug);
  if (builtin) return builtin.label;
  if (rule.label) return rule.label;
  return rule.action === "block" ? DEFAULT_BLOCK_LABEL : DEFAULT_REDACT_LABEL;
}

/**
 * The content filters of every guardrail that applies to a principal, built
 * once (patterns compiled, duplicates folded) and then applied to each
 * request's text. Cached alongside the effective policy.
 */
export class CompiledFilters {
  readonly empty: boolean;
  /** Identifies the rules by content: equal rules, equal key (see filterSetKey). */
  readonly key: string;
  /**
   * Estimated microseconds per scanned character, each detector counted once
   * (see CUSTOM_MICROS_PER_INSTRUCTION and detectors/builtins.ts).
   */
  readonly microsPerChar: number;
  private readonly outcomeKeys: { slug: string; label: string; action: FilterActionName }[];

  private constructor(
    /** The rules as given, so another thread can compile the same set. */
    readonly source: readonly FilterRule[],
    private readonly rules: CompiledRule[],
    outcomeKeys: { slug: string; label: string; action: FilterActionName }[],
  ) {
    this.empty = rules.length === 0;
    this.key = filterSetKey(source);
    this.outcomeKeys = outcomeKeys;
    let micros = 0;
    for (const detector of new Set(rules.map((r) => r.detector))) {
      micros += (rules.find((r) => r.detector === detector) as CompiledRule).microsPerChar;
    }
    this.microsPerChar = micros;
  }

  /** Throws an Error naming the problem when a custom pattern does not compile, or a slug is unknown. */
  static compile(rules: FilterRule[]): CompiledFilters {
    const compiled: CompiledRule[] = [];
    const outcomeKeys: { slug: string; label: string; action: FilterActionName }[] = [];
    const outcomeIndex = new Map<string, number>();
    const seen = new Set<string>();
    // Guardrails often repeat a pattern: compile each distinct one once.
    const patterns = new Map<string, { detector: Detector; microsPerChar: number }>();
    for (const rule of rules) {
      if (!Object.hasOwn(STRENGTH, rule.action))
        throw new Error(`Unknown content filter action ${JSON.stringify(rule.action)}`);
      const label = labelOf(rule);
      const userOnly = rule.slug === SCOPED_BUILTIN && rule.scanScope === "user_only";
      let detector: Detector;
      let microsPerChar: number;
      if (rule.slug === "custom") {
        const pattern = rule.pattern ?? "";
        let known = patterns.get(pattern);
        if (!known) {
          const re = compilePattern(pattern);
          known = {
            detector: customPatternDetector(re),
            microsPerChar: CUSTOM_MICROS_PER_INSTRUCTION * re.programSize(),
          };
          patterns.set(pattern, known);
        }
        ({ detector, microsPerChar } = known);
      } else {
        const builtin = BUILTIN_FILTERS.get(rule.slug);
        if (!builtin) throw new Error(`Unknown content filter ${JSON.stringify(rule.slug)}`);
        ({ detector, microsPerChar } = builtin);
      }
      // The same rule from two guardrails would only count every match twice.
      const signature = JSON.stringify([
        rule.slug,
        rule.action,
        label,
        rule.pattern ?? "",
        userOnly,
      ]);
      if (seen.has(signature)) continue;
      seen.add(signature);
      const key = JSON.stringify([rule.slug, label, rule.action]);
      let outcome = outcomeIndex.get(key);
      if (outcome === undefined) {
        outcome = outcomeKeys.length;
        outcomeIndex.set(key, outcome);
        outcomeKeys.push({ slug: rule.slug, label, action: rule.action });
      }
      compiled.push({
        slug: rule.slug,
        action: rule.action,
        label,
        name: BUILTIN_FILTERS.get(rule.slug)?.name ?? label,
        detector,
        userOnly,
        microsPerChar,
        outcome,
      });
    }
    for (const detector of new Set(compiled.map((r) => r.detector))) detector.warm?.();
    return new CompiledFilters(rules, compiled, outcomeKeys);
  }

  /**
   * Finds every rule's matches in the original text of each part, then lets
   * the strongest action win wherever matches overlap: any block match blocks
   * the request, redact matches are replaced by their label, flag matches are
   * only counted. Outcomes carry counts, never the matched text.
   */
  apply(parts: TextPart[]): FilterResult {
    if (this.empty) return { parts, outcomes: [] };
    // Per outcome, the spans already counted: two rules reporting alike count a stretch once.
    const counted = this.outcomeKeys.map(() => new Set<string>());
    let firstBlock: { part: number; hit: RuleHit } | undefined;
    // Names of the injection patterns behind block matches, each once, in order of finding.
    const patterns = new Set<string>();
    const out = parts.map((part, p) => {
      const hits = this.hitsIn(part);
      if (hits.length === 0) return part;
      const applied = appliedHits(hits);
      for (const h of applied) {
        counted[h.rule.outcome]?.add(`${p}:${h.start}:${h.end}`);
        if (h.rule.action === "block" && h.pattern !== undefined) patterns.add(h.pattern);
        if (
          h.rule.action === "block" &&
          (!firstBlock || (firstBlock.part === p && before(h, firstBlock.hit)))
        )
          firstBlock = { part: p, hit: h };
      }
      const redacted = applied.filter((h) => h.rule.action === "redact");
      return redacted.length ? { text: redact(part.text, redacted), role: part.role } : part;
    });
    const outcomes: FilterOutcome[] = [];
    this.outcomeKeys.forEach((key, i) => {
      const count = counted[i]?.size ?? 0;
      if (count > 0) outcomes.push({ ...key, count });
    });
    const result: FilterResult = { parts: out, outcomes };
    if (firstBlock) {
      const { rule, label } = firstBlock.hit;
      const blocked: Blocked = { slug: rule.slug, label, name: rule.name };
      if (rule.slug === SCOPED_BUILTIN) blocked.patterns = [...patterns];
      result.blockedBy = blocked;
    }
    return result;
  }

  private hitsIn(part: TextPart): RuleHit[] {
    const hits: RuleHit[] = [];
    if (part.text.length === 0) return hits;
    // Rules sharing a detector (a slug in two guardrails, one pattern twice) scan once.
    const found = new Map<Detector, Span[]>();
    this.rules.forEach((rule, order) => {
      if (rule.userOnly && part.role !== "user") return;
      let spans = found.get(rule.detector);
      if (!spans) {
        spans = rule.detector.find(part.text);
        found.set(rule.detector, spans);
      }
      const strength = STRENGTH[rule.action];
      for (const s of spans) {
        const hit: RuleHit = {
          start: s.start,
          end: s.end,
          strength,
          order,
          rule,
          label: rule.label,
        };
        if (s.name !== undefined) hit.pattern = s.name;
        hits.push(hit);
      }
    });
    return hits;
  }
}

/** A digest of the rules' content, in order: what caches of compiled sets are keyed by. */
export function filterSetKey(rules: readonly FilterRule[]): string {
  const canonical = rules.map((r) => [
    r.slug,
    r.action,
    r.label,
    r.pattern ?? "",
    r.scanScope ?? "",
  ]);
  return createHash("sha256").update(JSON.stringify(canonical)).digest("base64url");
}

function before(a: Hit, b: Hit): boolean {
  return a.start < b.start || (a.start === b.start && a.order < b.order);
}
