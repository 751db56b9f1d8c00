import { RE2JS, RE2Set } from "re2js";
import { emptyContext } from "./linear-scan.js";

/**
 * The parts of re2js's lazy DFA (src/DFA.js) that walking a set needs. re2js's own
 * `RE2Set#match` runs the same walk but cannot be stopped, and when the DFA gives up it
 * falls back to its NFA, which costs about as much as testing every member alone; this walk
 * checks a deadline whenever it builds a state and reports giving up instead.
 */
interface DfaState {
  isMatch: boolean;
  matchIDs: readonly number[];
  next: (DfaState | null)[] | null;
}
interface MachineInput {
  step(pos: number): number;
  context(pos: number): number;
  endPos(): number;
}
interface Dfa {
  failed: boolean;
  latin1Class: Int32Array;
  numClasses: number;
  runeClass(rune: number): number;
  start(input: MachineInput, pos: number): DfaState | null;
  stepOrReset(
    state: DfaState,
    cls: number,
    rune: number,
    anchor: number,
    pos: number,
    search: { resetPos: number },
  ): DfaState | null;
}

const UNANCHORED = 0;
/** re2js's rune for "past the end of the text" (DFA.js END_TEXT). */
const END_TEXT = -1;
/** What MachineInput.step answers past the end. */
const EOF = -8;
/** The set's DFA cache: far below re2js's 8 MB per regex, as a filter set holds many. */
const SET_DFA_BYTES = 2 * 1024 * 1024;
/** Cached steps between two looks at the clock (each a few nanoseconds). */
const STEPS_PER_CLOCK_CHECK = 1024;

/** A UTF-16 string as re2js's MachineUTF16Input reads it: (rune << 3) | width per position. */
function utf16Input(text: string): MachineInput {
  const n = text.length;
  return {
    step(pos: number): number {
      if (pos >= n) return EOF;
      const c1 = text.charCodeAt(pos);
      if (c1 < 0xd800 || c1 > 0xdbff || pos + 1 >= n) return (c1 << 3) | 1;
      const c2 = text.charCodeAt(pos + 1);
      if (c2 >= 0xdc00 && c2 <= 0xdfff)
        return ((((c1 - 0xd800) << 10) | (c2 - 0xdc00)) + 0x10000) * 8 + 2;
      return (c1 << 3) | 1;
    },
    context: (pos: number) => emptyContext(text, pos),
    endPos: () => n,
  };
}

/** What a walk found: which members match somewhere, or why it has no answer. */
export type SetAnswer = Uint8Array | "gave-up" | "late";

/**
 * Several regexes run as one: a single left-to-right pass over a text says which of them
 * match somewhere in it, which costs about what testing one of them costs. Most texts match
 * none of a guardrail's patterns, so only the members the pass names need a search of their own.
 */
export class PatternSet {
  private constructor(
    private readonly dfa: Dfa,
    /** Members, in the order they were given. */
    readonly size: number,
    /** Instructions of the set's program: one new DFA state costs a visit to each, at most. */
    readonly instructions: number,
  ) {}

  /**
   * The set of `res`, or undefined when they cannot run as one (a flag the set does not share,
   * lookbehind, or a program above re2js's size limit): then each is tested alone.
   */
  static of(res: readonly RE2JS[]): PatternSet | undefined {
    const set = new RE2Set(RE2Set.UNANCHORED, 0, SET_DFA_BYTES);
    for (const re of res) {
      const flags = re.flags();
      if ((flags & (RE2JS.DISABLE_UNICODE_GROUPS | RE2JS.LOOKBEHINDS)) !== 0) return undefined;
      // The prefixes RE2JS.compile gives its flags, in its order; LONGEST_MATCH only changes
      // which match is reported, not whether there is one.
      let source = re.pattern();
      if ((flags & RE2JS.CASE_INSENSITIVE) !== 0) source = `(?i)${source}`;
      if ((flags & RE2JS.DOTALL) !== 0) source = `(?s)${source}`;
      if ((flags & RE2JS.MULTILINE) !== 0) source = `(?m)${source}`;
      set.add(source);
    }
    try {
      set.compile();
    } catch {
      return undefined;
    }
    const dfa = set.dfa as unknown as Dfa;
    if (dfa.failed) return undefined;
    return new PatternSet(dfa, res.length, set.prog.numInst());
  }

  /**
   * Per member, 1 when it matches somewhere in `text`; "late" once `deadline`
   * (performance.now() milliseconds) passed, checked before each new DFA state and every
   * STEPS_PER_CLOCK_CHECK cached steps; "gave-up" when the DFA ran out of cache without
   * progress (texts that make it build states faster than it moves).
   */
  matching(text: string, deadline: number): SetAnswer {
    const dfa = this.dfa;
    const found = new Uint8Array(this.size);
    const input = utf16Input(text);
    const search = { resetPos: -1 };
    const first = dfa.start(input, 0);
    if (first === null) return "gave-up";
    let state: DfaState = first;
    const collect = (s: DfaState) => {
      for (const id of s.matchIDs) found[id] = 1;
    };
    const latin1 = dfa.latin1Class;
    const n = text.length;
    let sinceClock = 0;
    let i = 0;
    while (i < n) {
      const r = input.step(i);
      const rune = r >> 3;
      const cls = rune <= 0xff ? (latin1[rune] as number) : dfa.runeClass(rune);
      let next: DfaState | null = state.next?.[cls] ?? null;
      if (next === null || ++sinceClock >= STEPS_PER_CLOCK_CHECK) {
        sinceClock = 0;
        if (performance.now() > deadline) return "late";
      }
      if (next === null) {
        next = dfa.stepOrReset(state, cls, rune, UNANCHORED, i, search);
        if (next === null) return "gave-up";
      }
      state = next;
      if (state.isMatch) collect(state);
      i += r & 7;
    }
    const last = dfa.stepOrReset(state, dfa.numClasses, END_TEXT, UNANCHORED, i, search);
    if (last === null) return "gave-up";
    if (last.isMatch) collect(last);
    return found;
  }
}

// Fails at load time, not on a request, if a re2js upgrade changed what the walk relies on.
{
  const probe = PatternSet.of([RE2JS.compile("b+c"), RE2JS.compile("x"), RE2JS.compile("c\\b$")]);
  const answer = probe?.matching("abbc", Number.POSITIVE_INFINITY);
  if (!(answer instanceof Uint8Array) || answer.join() !== "1,0,1")
    throw new Error("re2js DFA layout changed: pattern-set needs updating");
}
