import { WEBHOOK_LIMITS } from "../../domain/limits.js";
import { quote } from "../../platform/quote.js";
import { fail } from "../../platform/rpc/request-rules.js";

/**
 * The rules of a webhook's values, which the request rules (request-rules.ts)
 * apply to a create and to each path of an update, and the form the handler
 * stores a checked value in.
 */

const L = WEBHOOK_LIMITS;

/** The thresholds of a webhook created without any. */
export const DEFAULT_THRESHOLDS_PCT: readonly number[] = Object.freeze([50, 80, 100]);

/**
 * An http(s) URL without credentials (they would be stored and logged with
 * it; a receiver authenticates us by the signature instead) or a fragment
 * (never sent), at most urlMax characters. Messages never echo a URL that
 * failed to parse: it may well hold a password.
 */
export function checkUrl(url: string): void {
  if (url.length === 0) fail("url is required");
  if (url.length > L.urlMax) fail(`url must be at most ${L.urlMax} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    fail("url must be an absolute http:// or https:// URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    fail(`url must use http or https, not ${quote(parsed.protocol.slice(0, -1))}`);
  if (parsed.username || parsed.password)
    fail(
      "url must not carry credentials (user:password@): receivers check the Railgate-Signature header",
    );
  if (parsed.hash) fail("url must not have a #fragment (it is never sent)");
  if (!parsed.hostname) fail("url must name a host");
}

/** A URL checkUrl passed, as it is stored and sent to: the parser's normal form. */
export function storedUrl(url: string): string {
  return new URL(url).toString();
}

/** Printable ASCII without spaces: a secret survives copy and paste and every header. */
const SECRET_RE = /^[\x21-\x7e]+$/;

export function checkSecret(secret: string): void {
  if (secret.length < L.secretMin || secret.length > L.secretMax || !SECRET_RE.test(secret)) {
    fail(
      `secret must be ${L.secretMin} to ${L.secretMax} printable ASCII characters without spaces (leave it out to have one generated)`,
    );
  }
}

/** Distinct integers from thresholdMin to thresholdMax, at most thresholdsMax. */
export function checkThresholds(values: readonly number[]): void {
  if (values.length > L.thresholdsMax)
    fail(`thresholds_pct must hold at most ${L.thresholdsMax} values`);
  values.forEach((v, i) => {
    if (!Number.isInteger(v) || v < L.thresholdMin || v > L.thresholdMax)
      fail(
        `thresholds_pct[${i}] must be an integer from ${L.thresholdMin} to ${L.thresholdMax} (percent of the limit), got ${v}`,
      );
  });
  if (new Set(values).size !== values.length) fail("thresholds_pct must not repeat a value");
}

/** Thresholds checkThresholds passed, as they are stored: ascending. */
export function storedThresholds(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Unset is null: no credits.low events. */
export function checkCreditsBelow(v: number | undefined): void {
  if (v !== undefined && (!Number.isFinite(v) || v < 0 || v > L.creditsBelowUsdMax))
    fail(`credits_below_usd must be a number from 0 to ${L.creditsBelowUsdMax} (USD) or null`);
}

/** The hint the API shows of a secret: its last 4 characters. */
export function secretHint(secret: string): string {
  return `...${secret.slice(-4)}`;
}
