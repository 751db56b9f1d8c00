import { tokenize } from "./pattern-syntax.js";

/**
 * JavaScript's `\s` (ECMAScript WhiteSpace and LineTerminator): tab, line
 * feed, vertical tab, form feed, carriage return, every Unicode space
 * separator (Zs: space, U+00A0, U+1680, U+2000-U+200A, U+202F, U+205F,
 * U+3000), U+2028, U+2029 and U+FEFF. RE2's `\s` is only `[\t\n\f\r ]`.
 */
const SPACE_ITEMS =
  "\\t\\n\\x0B\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}";
/** Everything else, as ranges, so that it can join other items inside a class. */
const NON_SPACE_ITEMS =
  "\\x00-\\x08\\x0E-\\x1F\\x21-\\x{9F}\\x{A1}-\\x{167F}\\x{1681}-\\x{1FFF}\\x{200B}-\\x{2027}" +
  "\\x{202A}-\\x{202E}\\x{2030}-\\x{205E}\\x{2060}-\\x{2FFF}\\x{3001}-\\x{FEFE}\\x{FF00}-\\x{10FFFF}";

/** JavaScript's `\s` as an RE2 class. */
export const JS_SPACE_CLASS = `[${SPACE_ITEMS}]`;

/** `\s` and `\S` inside a class's items, replaced by their ranges; other items kept as written. */
function rewriteItems(items: string): string {
  let out = "";
  let i = 0;
  while (i < items.length) {
    if (items[i] === "\\") {
      const pair = items.slice(i, i + 2);
      if (pair === "\\s") out += SPACE_ITEMS;
      else if (pair === "\\S") out += NON_SPACE_ITEMS;
      else out += pair;
      i += 2;
    } else {
      out += items[i];
      i++;
    }
  }
  return out;
}

/**
 * Rewrites an RE2 pattern so that `\s` and `\S`, alone or inside a class,
 * mean what they mean in JavaScript, the syntax guardrail patterns are
 * written for (OpenRouter documents them as JavaScript regular expressions):
 * `a\sb` must match "a b" with a no-break space. Everything else, `\\s`
 * (a backslash then "s") and `\Q...\E` quotes included, is left as written.
 * The pattern must already compile.
 */
export function withJsWhitespace(pattern: string): string {
  if (!pattern.includes("\\s") && !pattern.includes("\\S")) return pattern;
  let out = "";
  for (const t of tokenize(pattern)) {
    const text = pattern.slice(t.start, t.end);
    if (t.kind === "escape" && text === "\\s") out += JS_SPACE_CLASS;
    else if (t.kind === "escape" && text === "\\S") out += `[${NON_SPACE_ITEMS}]`;
    else if (t.kind === "class")
      out +=
        pattern.slice(t.start, t.itemsStart) +
        rewriteItems(pattern.slice(t.itemsStart, t.end - 1)) +
        "]";
    else out += text;
  }
  return out;
}
