/** The most characters of a client's value that an error message repeats. */
export const QUOTE_MAX_CHARS = 100;

/**
 * A value from a request as an error message may repeat it: JSON-quoted (so
 * control characters and quotes cannot bend the message) and cut to about 100
 * characters with an ellipsis. Messages travel in a gRPC header and back to the
 * client, so an unbounded echo would let one request break the HTTP/2 session.
 */
export function quote(value: unknown, max = QUOTE_MAX_CHARS): string {
  const text = typeof value === "string" ? value : String(value);
  if (text.length <= max) return JSON.stringify(text);
  // Do not cut a surrogate pair in half.
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return JSON.stringify(`${text.slice(0, end)}…`);
}
