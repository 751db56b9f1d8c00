import { NETWORK_CODES } from "../store-availability.js";

/** pg's own words for a connection it lost or never got (it has no error classes for them). */
const CLIENT_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * True when a query failed because the database did not answer (down, restarting, out of
 * connections), as opposed to a bug or a refused statement, which stay 500s: SQLSTATE classes
 * 08 (connection), 53 (resources), 57 (operator intervention, e.g. a shutdown) and 58 (system),
 * or a socket that never connected.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as NodeJS.ErrnoException).code;
  if (typeof code === "string") {
    if (NETWORK_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) return ["08", "53", "57", "58"].includes(code.slice(0, 2));
  }
  // An AggregateError (every address refused) carries the socket errors inside.
  if (err instanceof AggregateError) return err.errors.some(isDatabaseUnavailable);
  return CLIENT_MESSAGES.test(err.message);
}
