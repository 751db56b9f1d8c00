import { createHash } from "node:crypto";
import {
  DEFAULT_BLOCK_LABEL,
  DEFAULT_REDACT_LABEL,
  SCOPED_BUILTIN,
} from "../../domain/builtin-filters.js";
import { BUILTIN_FILTERS } from "./detectors/builtins.js";
import { compilePattern, customPatternDetector } from "./detectors/custom-pattern.js";
import type { Detector, Pretested, Span } from "./detectors/detector.js";
import {
  LITERAL_LIST_MIN_CHARS,
  literalList,
  literalListDetector,
} from "./detectors/literal-list.js";
import { PatternGate } from "./pattern-gate.js";
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

/**
 * A word list's cost per character (an automaton step, and the occurrences it reports), priced
 * like a regex builtin: it does not grow with the list (see detectors/literal-list.ts).
 */
const LITERAL_LIST_MICROS_PER_CHAR = 0.35;

interface CustomDetector {
  detector: Detector;
  microsPerChar: number;
}

/** A custom pattern's detector and its price: a long word list on an automaton, else RE2. */
function customDetector(pattern: string): CustomDetector {
  const list = pattern.length > LITERAL_LIST_MIN_CHARS ? literalList(pattern) : undefined;
  if (list) {
    return { detector: literalListDetector(list), microsPerChar: LITERAL_LIST_MICROS_PER_CHAR };
  }
  const re = compilePattern(pattern);
  return {
    detector: customPatternDetector(re),
    microsPerChar: CUSTOM_MICROS_PER_INSTRUCTION * re.programSize(),
  };
}

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

/** The label a rule's outcomes carry (what a redaction writes; what the request log shows). */
export function labelOf(rule: FilterRule): string {
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
  /**
   * The largest one detector's microsPerChar: what one step of a budgeted run can cost
   * (see apply's deadline).
   */
  readonly maxDetectorMicrosPerChar: number;
  /**
   * The most one step of the custom patterns' gate can cost, whatever the text's length (see
   * PatternGate): with maxDetectorMicrosPerChar, what a budgeted run must keep in reserve.
   */
  readonly gateStepMicros: number;
  private readonly outcomeKeys: { slug: string; label: string; action: FilterActionName }[];

  private constructor(
    /** The rules as given, so another thread can compile the same set. */
    readonly source: readonly FilterRule[],
    private readonly rules: CompiledRule[],
    outcomeKeys: { slug: string; label: string; action: FilterActionName }[],
    private readonly gate: PatternGate | undefined,
  ) {
    this.empty = rules.length === 0;
    this.key = filterSetKey(source);
    this.outcomeKeys = outcomeKeys;
    let micros = 0;
    let max = 0;
    for (const detector of new Set(rules.map((r) => r.detector))) {
      const each = (rules.find((r) => r.detector === detector) as CompiledRule).microsPerChar;
      micros += each;
      max = Math.max(max, each);
    }
    this.microsPerChar = micros + (gate?.microsPerChar ?? 0);
    this.maxDetectorMicrosPerChar = max;
    this.gateStepMicros = gate?.stepMicros(CUSTOM_MICROS_PER_INSTRUCTION) ?? 0;
  }

  /** Throws an Error naming the problem when a custom pattern does not compile, or a slug is unknown. */
  static compile(rules: FilterRule[]): CompiledFilters {
    const compiled: CompiledRule[] = [];
    const outcomeKeys: { slug: string; label: string; action: FilterActionName }[] = [];
    const outcomeIndex = new Map<string, number>();
    const seen = new Set<string>();
    // Guardrails often repeat a pattern: compile each distinct one once.
    const patterns = new Map<string, CustomDetector>();
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
          known = customDetector(pattern);
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
    const gate = PatternGate.of(new Set(compiled.map((r) => r.detector)));
    return new CompiledFilters(rules, compiled, outcomeKeys, gate);
  }

  /**
   * Finds every rule's matches in the original text of each part, then lets
   * the strongest action win wherever matches overlap: any block match blocks
   * the request, redact matches are replaced by their label, flag matches are
   * only counted. Outcomes carry counts, never the matched text.
   */
  apply(parts: TextPart[], deadline?: number): FilterResult {
    if (this.empty) return { parts, outcomes: [] };
    const found: Map<Detector, Span[]>[] = [];
    // Every detector runs before any outcome is worked out: a run past its deadline
    // (performance.now() milliseconds) stops between two detectors, having changed nothing.
    for (const part of parts) {
      const spans = new Map<Detector, Span[]>();
      found.push(spans);
      this.scan(part, spans, deadline);
    }
    // Per outcome, the spans already counted: two rules reporting alike count a stretch once.
    // Made on the first hit: most texts have none, and a set per outcome is garbage per request.
    const counted: (Set<string> | undefined)[] = [];
    let firstBlock: { part: number; hit: RuleHit } | undefined;
    // Names of the injection patterns behind block matches, each once, in order of finding.
    const patterns = new Set<string>();
    const out = parts.map((part, p) => {
      const hits = this.hitsIn(part, found[p] as Map<Detector, Span[]>);
      if (hits.length === 0) return part;
      const applied = appliedHits(hits);
      for (const h of applied) {
        let spans = counted[h.rule.outcome];
        if (!spans) {
          spans = new Set<string>();
          counted[h.rule.outcome] = spans;
        }
        spans.add(`${p}:${h.start}:${h.end}`);
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

  /**
   * Each detector the part's rules use, run once (rules sharing a detector scan once), told
   * what the gate's one pass over the part found out about their regexes.
   */
  private scan(part: TextPart, found: Map<Detector, Span[]>, deadline: number | undefined): void {
    if (part.text.length === 0) return;
    let pretested: Pretested | undefined;
    if (this.gate) {
      const answer = this.gate.pass(part.text, deadline);
      if (answer === "late") throw new PastDeadline();
      pretested = answer;
    }
    for (const rule of this.rules) {
      if (rule.userOnly && part.role !== "user") continue;
      if (found.has(rule.detector)) continue;
      if (deadline !== undefined && performance.now() > deadline) throw new PastDeadline();
      found.set(rule.detector, rule.detector.find(part.text, pretested));
    }
  }

  private hitsIn(part: TextPart, found: Map<Detector, Span[]>): RuleHit[] {
    const hits: RuleHit[] = [];
    if (part.text.length === 0) return hits;
    this.rules.forEach((rule, order) => {
      if (rule.userOnly && part.role !== "user") return;
      const spans = found.get(rule.detector) ?? [];
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

/** Thrown by apply() when its deadline passed before every detector ran. */
export class PastDeadline extends Error {
  constructor() {
    super("content filtering passed its inline deadline");
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
