import { RE2JS } from "re2js";
import type { Span } from "./detector.js";

/**
 * re2js's compiled program, as its Backtracker reads it (src/Inst.js, src/Prog.js).
 * re2js exposes the program (`RE2JS#re2().prog`) but not a find-all that stays
 * linear: its `find()` restarts per match, and a search may scan to the end of
 * the text before settling on a short match (`x.*y|x` over "xxxx...") or an
 * empty one (`(.*x)?`), which makes finding every match quadratic.
 */
interface Inst {
  op: number;
  out: number;
  arg: number;
  matchRune(rune: number): boolean;
}
interface Prog {
  start: number;
  numLb: number;
  numInst(): number;
  getInst(pc: number): Inst;
}

const ALT = 1;
const ALT_MATCH = 2;
const CAPTURE = 3;
const EMPTY_WIDTH = 4;
const FAIL = 5;
const MATCH = 6;
const NOP = 7;
const RUNE = 8;
// 9 is RUNE1 (one literal rune): a rune instruction like the others.
const RUNE_ANY = 10;
const RUNE_ANY_NOT_NL = 11;

// Empty-width conditions (re2js Utils.EMPTY_*), evaluated like its UTF-16 input does.
const BEGIN_LINE = 1;
const END_LINE = 2;
const BEGIN_TEXT = 4;
const END_TEXT = 8;
const WORD_BOUNDARY = 16;
const NO_WORD_BOUNDARY = 32;

const isWordUnit = (c: number) =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/** The empty-width conditions that hold between two UTF-16 units (-1: the text's edge). */
function contextBetween(before: number, after: number): number {
  let flags = 0;
  if (before < 0) flags |= BEGIN_TEXT | BEGIN_LINE;
  if (before === 10) flags |= BEGIN_LINE;
  if (after < 0) flags |= END_TEXT | END_LINE;
  if (after === 10) flags |= END_LINE;
  flags |= isWordUnit(before) !== isWordUnit(after) ? WORD_BOUNDARY : NO_WORD_BOUNDARY;
  return flags;
}

/** The empty-width conditions that hold at `pos` of `text`, as re2js's UTF-16 input sees them. */
export function emptyContext(text: string, pos: number): number {
  return contextBetween(
    pos > 0 ? text.charCodeAt(pos - 1) : -1,
    pos < text.length ? text.charCodeAt(pos) : -1,
  );
}

/** Every distinct neighbourhood an empty-width assertion can see: edge, newline, word, other. */
const NEIGHBOURS = [-1, 10, 97, 32];

/**
 * True when `re` can match the empty string somewhere: in some neighbourhood
 * (start or end of text, of a line, at or off a word boundary) its start
 * reaches a match without consuming a character. Such a pattern "matches"
 * between every two characters, which is never what a filter means.
 */
export function canMatchEmpty(re: RE2JS): boolean {
  const prog = re.re2().prog as Prog;
  for (const before of NEIGHBOURS) {
    for (const after of NEIGHBOURS) {
      const flags = contextBetween(before, after);
      const seen = new Set<number>();
      const pending = [prog.start];
      while (pending.length > 0) {
        const pc = pending.pop() as number;
        if (seen.has(pc)) continue;
        seen.add(pc);
        const inst = prog.getInst(pc);
        if (inst.op === MATCH) return true;
        if (inst.op === ALT || inst.op === ALT_MATCH) pending.push(inst.out, inst.arg);
        else if (inst.op === NOP || inst.op === CAPTURE) pending.push(inst.out);
        else if (inst.op === EMPTY_WIDTH && (inst.arg & ~flags) === 0) pending.push(inst.out);
      }
    }
  }
  return false;
}

/** Work counters, for tests that prove the scan linear. */
export interface ScanStats {
  /** (instruction, position) states visited: at most about 2 x (text length + 1) x program size. */
  steps: number;
}

/** One bit per (position, instruction), reused across calls so a request allocates it once. */
let visited = new Uint32Array(0);

/**
 * Every non-empty match of `re` in `text`, left to right, without overlaps:
 * the leftmost match, then the leftmost one from where it ended, and so on.
 * Leftmost-first (Perl) preference, or leftmost-longest when `re` was
 * compiled with LONGEST_MATCH; empty matches are never reported.
 *
 * Linear in the text: a backtracking search over (instruction, position)
 * states that remembers, across all the searches of one call, every state
 * already seen. Whether a state can still reach a match does not depend on
 * where the search began, so a state that failed once fails again and is
 * never re-explored; the only states whose outcome depends on the search
 * (those that matched, at the position where a match ended) are forgotten
 * after each match. Each state is thus visited at most about twice, and the
 * whole call costs O(text length x program size), however many matches there
 * are and however far a failing alternative could run.
 */
export function findMatches(re: RE2JS, text: string, stats?: ScanStats): Span[] {
  const prog = re.re2().prog as Prog;
  if (prog.numLb > 0) throw new Error("lookbehind patterns are not supported");
  const longest = (re.flags() & RE2JS.LONGEST_MATCH) !== 0;
  const size = prog.numInst();
  const n = text.length;
  const words = Math.ceil(((n + 1) * size) / 32);
  if (visited.length < words) visited = new Uint32Array(words);
  else visited.fill(0, 0, words);
  const seen = visited;
  const insts: Inst[] = [];
  for (let pc = 0; pc < size; pc++) insts.push(prog.getInst(pc));

  // Pending (pc, pos) pairs of lower-priority branches.
  const stackPc: number[] = [];
  const stackPos: number[] = [];
  let steps = 0;

  /** The end of the preferred non-empty match starting at `root`, or -1. */
  const matchAt = (root: number): number => {
    let best = -1;
    stackPc.length = 0;
    stackPos.length = 0;
    stackPc.push(prog.start);
    stackPos.push(root);
    while (stackPc.length > 0) {
      let pc = stackPc.pop() as number;
      let pos = stackPos.pop() as number;
      for (;;) {
        const bit = pos * size + pc;
        const mask = 1 << (bit & 31);
        const word = bit >>> 5;
        if ((seen[word] as number) & mask) break;
        seen[word] = (seen[word] as number) | mask;
        steps++;
        const inst = insts[pc] as Inst;
        const op = inst.op;
        if (op === ALT || op === ALT_MATCH) {
          // `out` is the preferred branch; `arg` is tried once it has failed.
          stackPc.push(inst.arg);
          stackPos.push(pos);
          pc = inst.out;
        } else if (op === NOP || op === CAPTURE) {
          pc = inst.out;
        } else if (op === EMPTY_WIDTH) {
          if ((inst.arg & ~emptyContext(text, pos)) !== 0) break;
          pc = inst.out;
        } else if (op === MATCH) {
          if (pos > root && pos > best) {
            best = pos;
            if (!longest) return best;
          }
          break;
        } else if (op >= RUNE && op <= RUNE_ANY_NOT_NL) {
          if (pos >= n) break;
          const rune = text.codePointAt(pos) as number;
          if (op === RUNE_ANY_NOT_NL ? rune === 10 : op !== RUNE_ANY && !inst.matchRune(rune))
            break;
          pos += rune > 0xffff ? 2 : 1;
          pc = inst.out;
        } else if (op === FAIL) {
          break;
        } else {
          throw new Error(`unexpected re2js instruction ${op}`);
        }
      }
    }
    return best;
  };

  /** Forgets the states at `pos`: a match ended there, so their outcome depended on its search. */
  const forget = (pos: number) => {
    for (let bit = pos * size, end = bit + size; bit < end; bit++)
      seen[bit >>> 5] = (seen[bit >>> 5] as number) & ~(1 << (bit & 31));
  };

  const spans: Span[] = [];
  let root = 0;
  while (root < n) {
    const end = matchAt(root);
    if (end < 0) {
      // Step over a whole surrogate pair, as re2js does.
      root += (text.codePointAt(root) as number) > 0xffff ? 2 : 1;
      continue;
    }
    spans.push({ start: root, end });
    forget(end);
    root = end;
  }
  if (stats) stats.steps += steps;
  return spans;
}

// Fails at load time, not on a request, if a re2js upgrade changed the program layout.
{
  const probe = findMatches(RE2JS.compile("b+|x"), "abbc x");
  if (probe.length !== 2 || probe[0]?.start !== 1 || probe[0]?.end !== 3)
    throw new Error("re2js program layout changed: linear-scan needs updating");
}
