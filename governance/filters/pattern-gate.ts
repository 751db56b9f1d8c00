import type { RE2JS } from "re2js";
import type { Detector, Pretested } from "./detectors/detector.js";
import { PatternSet } from "./detectors/pattern-set.js";

/**
 * The gate's own budget per character and instruction of its program when no deadline is
 * given, a tenth of what the NFA prices a custom pattern at: a warm pass costs a hundredth of
 * it, a cold one builds a few dozen DFA states within it, and past it each regex is tested
 * alone, as without a gate. Counted in the set's estimate (CompiledFilters.microsPerChar).
 */
const GATE_MICROS_PER_INSTRUCTION = 0.004;

/**
 * Larger regexes keep their own test: their DFA states would crowd the set's cache (the
 * prompt-injection alternation, thousands of instructions, made a prose text's pass rebuild
 * states all along it), where alone each has a cache of its own.
 */
const MAX_MEMBER_INSTRUCTIONS = 300;

/** The most passes skipped after passes that found no answer (see PatternGate.pass). */
const MAX_BACKOFF = 64;

/**
 * The regexes a filter set's detectors test on a whole text before searching it (custom RE2
 * patterns and the builtins' own, up to MAX_MEMBER_INSTRUCTIONS each), tested together: one pass over the text says which of
 * them match somewhere (see PatternSet), where testing each costs a pass per regex. A regex
 * the pass rules out finds nothing, exactly as its own test would have said; the others
 * search as before.
 */
export class PatternGate {
  private constructor(
    private readonly set: PatternSet,
    /** Each regex's member index in the set. */
    private readonly index: ReadonlyMap<RE2JS, number>,
  ) {}

  /** Passes left to skip, and how many the next pass without an answer makes skip. */
  private skip = 0;
  private backoff = 1;

  /** A gate over the regexes of `detectors`, when there are two or more and they run as a set. */
  static of(detectors: Iterable<Detector>): PatternGate | undefined {
    const regexes = [...new Set([...detectors].flatMap((d) => d.regexes ?? []))].filter(
      (re) => re.programSize() <= MAX_MEMBER_INSTRUCTIONS,
    );
    if (regexes.length < 2) return undefined;
    const set = PatternSet.of(regexes);
    if (!set) return undefined;
    return new PatternGate(set, new Map(regexes.map((re, i) => [re, i])));
  }

  /** The gate's own budget, per character (see GATE_MICROS_PER_INSTRUCTION). */
  get microsPerChar(): number {
    return this.set.instructions * GATE_MICROS_PER_INSTRUCTION;
  }

  /** The most one step of the pass can cost (a new DFA state), in microseconds. */
  stepMicros(microsPerInstruction: number): number {
    return this.set.instructions * microsPerInstruction;
  }

  /**
   * What one pass found out about `text`, or undefined when the pass has no answer within
   * its budget: then each regex is tested alone. "late" once `deadline` (performance.now()
   * milliseconds), the caller's, passed.
   */
  pass(text: string, deadline: number | undefined): Pretested | undefined | "late" {
    // Texts that keep the set's DFA building states (its cache too small for what they mix)
    // would pay the pass and then every test anyway: after such a pass the next ones are
    // skipped, twice as many each time, until a pass answers again.
    if (this.skip > 0) {
      this.skip--;
      return undefined;
    }
    const own = performance.now() + (this.microsPerChar * text.length) / 1000;
    const answer = this.set.matching(text, deadline === undefined ? own : Math.min(own, deadline));
    if (answer instanceof Uint8Array) {
      this.backoff = 1;
      const index = this.index;
      return {
        text,
        matches(re: RE2JS): boolean | undefined {
          const i = index.get(re);
          return i === undefined ? undefined : answer[i] === 1;
        },
      };
    }
    if (answer === "late" && deadline !== undefined && performance.now() > deadline) return "late";
    this.skip = this.backoff;
    this.backoff = Math.min(MAX_BACKOFF, this.backoff * 2);
    return undefined;
  }
}
