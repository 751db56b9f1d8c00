import { createHmac, timingSafeEqual } from "node:crypto";

/** The header every webhook request carries: `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const WEBHOOK_SIGNATURE_HEADER = "railgate-signature";

/**
 * How old a signed timestamp a receiver should accept by default: long enough
 * for clock skew and a slow network, short enough that a captured request
 * replayed later is refused.
 */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

/** HMAC-SHA256 of `<t>.<raw body>` with the webhook's secret, as lowercase hex. */
export function webhookSignature(secret: string, timestamp: number, body: string | Buffer): string {
  // Over the bytes: a receiver hashes what it read off the wire, before any decoding.
  return createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
}

/**
 * The Railgate-Signature value of one attempt. The timestamp is signed with
 * the body, so a receiver that refuses old timestamps also refuses a replayed
 * request: changing `t` breaks the signature. Each retry is signed afresh.
 */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${webhookSignature(secret, timestamp, body)}`;
}

export type SignatureCheck =
  | { ok: true; timestamp: number }
  | { ok: false; reason: "malformed" | "stale" | "mismatch" };

/**
 * What a receiver runs on each request: parses the header, refuses a
 * timestamp further than `toleranceSeconds` from `nowSeconds` (either way) and
 * compares the signature in constant time. `body` must be the raw bytes as
 * received (parse the JSON only after this check). Several `v1=` entries are
 * accepted, so a receiver keeps working while a secret is being rotated.
 */
export function verifyWebhookSignature(options: {
  secret: string;
  header: string | undefined | null;
  body: string | Buffer;
  toleranceSeconds?: number;
  nowSeconds?: number;
}): SignatureCheck {
  const { secret, header } = options;
  if (!header || header.length > 1_000) return { ok: false, reason: "malformed" };
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) return { ok: false, reason: "malformed" };
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === "t") {
      if (!/^\d{1,12}$/.test(value)) return { ok: false, reason: "malformed" };
      timestamp = Number(value);
    } else if (name === "v1") {
      if (!/^[0-9a-f]{64}$/.test(value)) return { ok: false, reason: "malformed" };
      signatures.push(value);
    }
  }
  if (timestamp === undefined || signatures.length === 0) return { ok: false, reason: "malformed" };
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(now - timestamp) > tolerance) return { ok: false, reason: "stale" };
  const expected = Buffer.from(webhookSignature(secret, timestamp, options.body), "hex");
  const matches = signatures.some((s) => timingSafeEqual(Buffer.from(s, "hex"), expected));
  return matches ? { ok: true, timestamp } : { ok: false, reason: "mismatch" };
}
