/**
 * Where a sentence ends: terminal punctuation (with any closing quotes or brackets) followed by
 * whitespace or the end of text, CJK full stops (which need no following space), or line breaks.
 */
const SENTENCE_END = /[.!?…]+["'”’)\]]*(?=\s|$)|[。！？]+["'”’)\]」』]*|[\n\r\u2028\u2029]+/gu;

/** Clause punctuation followed by a space: the preferred place to break an over-long sentence. */
const CLAUSE_BREAK = /[,;:，；：、]\s/gu;

/**
 * Splits text into sentences of at most `maxChars` characters, in order. Pieces are trimmed and
 * empty ones dropped; otherwise every character of the input ends up in exactly one piece.
 */
export function splitSentences(text: string, maxChars = 400): string[] {
  if (!Number.isInteger(maxChars) || maxChars < 2) {
    throw new RangeError(`maxChars must be an integer of at least 2, got ${maxChars}`);
  }
  const pieces: string[] = [];
  let start = 0;
  for (const match of text.matchAll(SENTENCE_END)) {
    const end = match.index + match[0].length;
    // "e.g. this", "Well... maybe", "(quietly!) he": punctuation before a lowercase word ends no sentence.
    if (/^[.!?…]/u.test(match[0]) && nextWordIsLowercase(text, end)) {
      continue;
    }
    splitLong(text.slice(start, end), maxChars, pieces);
    start = end;
  }
  splitLong(text.slice(start), maxChars, pieces);
  return pieces;
}

function nextWordIsLowercase(text: string, from: number): boolean {
  const next = /\S/u.exec(text.slice(from, from + 64));
  return next !== null && /\p{Ll}/u.test(next[0]);
}

function splitLong(sentence: string, maxChars: number, out: string[]): void {
  let rest = sentence.trim();
  while (rest.length > maxChars) {
    const cut = cutPoint(rest, maxChars);
    out.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest.length > 0) {
    out.push(rest);
  }
}

/** The index to cut at so that the head is non-empty and at most `maxChars` long. */
function cutPoint(text: string, maxChars: number): number {
  const window = text.slice(0, maxChars + 1);
  let clause = -1;
  for (const match of window.matchAll(CLAUSE_BREAK)) {
    clause = match.index + 1;
  }
  // A clause break too near the start would leave a fragment too short to sound natural.
  if (clause > maxChars / 4) {
    return clause;
  }
  const space = lastWhitespace(window);
  if (space > 0) {
    return space;
  }
  // No break at all (e.g. a long URL): cut hard, but never inside a surrogate pair.
  const high = text.charCodeAt(maxChars - 1);
  return high >= 0xd800 && high <= 0xdbff ? maxChars - 1 : maxChars;
}

function lastWhitespace(text: string): number {
  for (let i = text.length - 1; i > 0; i--) {
    if (/\s/u.test(text[i])) {
      return i;
    }
  }
  return -1;
}

/**
 * Cuts the first piece short (at a clause or a space) so the first audio leaves after a couple of
 * seconds of speech rather than after a whole long sentence; later pieces keep whole sentences,
 * which sound better and are synthesized while the first one plays.
 */
export function withShortLead(pieces: string[], leadChars = 32): string[] {
  const [first, ...rest] = pieces;
  // A first sentence under twice the lead is quick to speak already; cutting it would only
  // leave a stub of a word or two with odd prosody.
  if (first === undefined || first.length < leadChars * 2) {
    return pieces;
  }
  const cut = cutPoint(first, leadChars);
  return [first.slice(0, cut).trimEnd(), first.slice(cut).trimStart(), ...rest].filter(
    (p) => p.length > 0,
  );
}
