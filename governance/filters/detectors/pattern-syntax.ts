/**
 * A reading of RE2 pattern source, just deep enough to rewrite escapes and to
 * see groups and quantifiers. It assumes the pattern already compiled (RE2
 * accepted it), so it never has to report a syntax error of its own.
 */

/** One piece of a pattern, with its offsets in the source. */
export type Token =
  | { kind: "open"; start: number; end: number }
  /** "(?i)": sets flags for the rest of the group, matches nothing, takes no quantifier. */
  | { kind: "flags"; start: number; end: number }
  | { kind: "close"; start: number; end: number }
  | { kind: "alternation"; start: number; end: number }
  | { kind: "quantifier"; start: number; end: number; min: number; max: number }
  /** A character class "[...]", with the offset where its items begin (after "[" or "[^"). */
  | { kind: "class"; start: number; end: number; itemsStart: number }
  /** "\x", "\pN", "\p{Greek}", "\x{41}", "\Q...\E" and every other backslash form. */
  | { kind: "escape"; start: number; end: number }
  | { kind: "char"; start: number; end: number };

const REPEAT = /^\{(\d+)(,(\d*))?\}/;

/** Where the escape starting at `i` (a backslash) ends. */
function escapeEnd(p: string, i: number): number {
  const c = p[i + 1];
  if (c === "Q") {
    const close = p.indexOf("\\E", i + 2);
    return close < 0 ? p.length : close + 2;
  }
  if ((c === "p" || c === "P" || c === "x") && p[i + 2] === "{") {
    const close = p.indexOf("}", i + 3);
    return close < 0 ? p.length : close + 1;
  }
  if (c === "x") return Math.min(p.length, i + 4);
  if (c === "p" || c === "P") return Math.min(p.length, i + 3);
  if (c !== undefined && c >= "0" && c <= "7") {
    // Octal: up to three digits.
    let j = i + 2;
    while (j < i + 4 && j < p.length && (p[j] as string) >= "0" && (p[j] as string) <= "7") j++;
    return j;
  }
  return Math.min(p.length, i + 2);
}

/** Where the class starting at `i` (a "[") ends, and where its items begin. */
function classEnd(p: string, i: number): { end: number; itemsStart: number } {
  let j = i + 1;
  if (p[j] === "^") j++;
  const itemsStart = j;
  // A "]" right after "[" or "[^" is a literal.
  if (p[j] === "]") j++;
  while (j < p.length && p[j] !== "]") {
    if (p[j] === "\\") j = escapeEnd(p, j);
    else if (p[j] === "[" && p[j + 1] === ":") {
      const close = p.indexOf(":]", j + 2);
      j = close < 0 ? p.length : close + 2;
    } else j++;
  }
  return { end: Math.min(p.length, j + 1), itemsStart };
}

/** The pattern as a flat list of tokens. */
export function tokenize(p: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i] as string;
    const start = i;
    if (c === "\\") {
      i = escapeEnd(p, i);
      tokens.push({ kind: "escape", start, end: i });
    } else if (c === "[") {
      const { end, itemsStart } = classEnd(p, i);
      i = end;
      tokens.push({ kind: "class", start, end, itemsStart });
    } else if (c === "(") {
      if (p[i + 1] === "?" && p[i + 2] !== "P" && p[i + 2] !== "<") {
        // "(?flags)" or "(?flags:": the flags run to ")" or ":".
        let j = i + 2;
        while (j < p.length && p[j] !== ")" && p[j] !== ":") j++;
        i = j + 1;
        tokens.push({ kind: p[j] === ")" ? "flags" : "open", start, end: i });
      } else if (p[i + 1] === "?") {
        // "(?P<name>" or "(?<name>".
        i = p.indexOf(">", i) + 1 || p.length;
        tokens.push({ kind: "open", start, end: i });
      } else {
        i++;
        tokens.push({ kind: "open", start, end: i });
      }
    } else if (c === ")") {
      i++;
      tokens.push({ kind: "close", start, end: i });
    } else if (c === "|") {
      i++;
      tokens.push({ kind: "alternation", start, end: i });
    } else if (c === "*" || c === "+" || c === "?") {
      i++;
      if (p[i] === "?") i++;
      const [min, max] = c === "*" ? [0, Infinity] : c === "+" ? [1, Infinity] : [0, 1];
      tokens.push({ kind: "quantifier", start, end: i, min, max });
    } else if (c === "{" && REPEAT.test(p.slice(i, i + 24))) {
      const m = REPEAT.exec(p.slice(i)) as RegExpExecArray;
      i += m[0].length;
      if (p[i] === "?") i++;
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
      tokens.push({ kind: "quantifier", start, end: i, min, max });
    } else {
      // One code point, so a surrogate pair is one character.
      i += (p.codePointAt(i) as number) > 0xffff ? 2 : 1;
      tokens.push({ kind: "char", start, end: i });
    }
  }
  return tokens;
}
