import type { Guardrail } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import type { Admission, AdmissionResult } from "./admission.js";
import { decodeFields } from "./guardrail-fields.js";
import type { LimitReached } from "./limits.js";
import type { AdmitReply, CountedReply, PatchGuardrailReply } from "./redis-commands.js";
import type { IdempotencyClaim, Versioned } from "./types.js";

/** Script replies (see redis-commands.ts) read into the store's own results. */

/** A counted create: its status, or the limit it reached with the count found. */
export function counted<Refusal extends string>(
  reply: CountedReply<Refusal>,
  limit: number,
): "ok" | Refusal | LimitReached {
  // By length: TypeScript cannot rule out that a generic Refusal is "limit" too.
  return reply.length === 2 ? { limit, count: reply[1], adding: 1 } : reply[0];
}

export function patched(reply: PatchGuardrailReply): Versioned<Guardrail> | "conflict" | "missing" {
  const [status, version, guardrail] = reply;
  const word = status.toString();
  if (word === "conflict" || word === "missing") return word;
  if (word !== "ok" || version === undefined || guardrail === undefined) {
    throw new Error(`PATCH_GUARDRAIL answered "${word}"`);
  }
  return { value: decodeFields([guardrail], version), version };
}

/**
 * The verdict of one request of ADMIT_GROUP (its own error, if any, is read by the caller); a
 * refused budget is named by its place in the admission's budgets.
 */
export function admission(
  reply: Exclude<AdmitReply, ["error", string]>,
  a: Admission,
): AdmissionResult {
  switch (reply[0]) {
    case "ok":
      return a.rate
        ? { ok: true, metered: reply[1] === 1, rateUsed: reply[2] }
        : { ok: true, metered: reply[1] === 1 };
    case "rate-limit":
      return { ok: false, reason: "rate-limit", retryAfterMs: Math.max(0, reply[1]) };
    case "credits":
      return { ok: false, reason: "credits", balanceMicros: reply[1] };
    case "key-limit":
      return { ok: false, reason: "key-limit", spentMicros: reply[1] };
    case "budget": {
      const budget = a.budgets[reply[1]];
      return {
        ok: false,
        reason: "budget",
        guardrailId: budget?.guardrailId ?? "",
        entity: budget?.entity ?? "",
        spentMicros: reply[2],
      };
    }
  }
}

/** CLAIM_IDEMPOTENCY's reply: empty when `token` took the claim, else the record's fields. */
export function idempotencyClaimOf(reply: string[], token: string): IdempotencyClaim {
  if (reply.length === 0) return { state: "claimed", token };
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < reply.length; i += 2)
    fields.set(reply[i] as string, reply[i + 1] as string);
  const fingerprint = fields.get("f") ?? "";
  const status = fields.get("s");
  if (status === undefined) return { state: "in-progress", fingerprint };
  return {
    state: "done",
    fingerprint,
    answer: { status: Number(status), body: fields.get("b") ?? "" },
  };
}
