import { createHash } from "node:crypto";
import type { CatalogEndpoint } from "../../../domain/catalog/types.js";
import type { SpeechPlan } from "../request.js";

/** JSON with every object's keys sorted, so equal values always hash alike. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * The audio cache's key: SHA-256 of the request as the engine receives it, after content
 * filtering (a redacted text is cached as redacted): model, format, speed, the segments (text,
 * voice, instructions), the provider options, a hash of each reference, and the endpoints the
 * key's policy lets serve it. The endpoints are in the key so a clip is only ever served to a
 * request whose guardrails would have let the same providers produce it (a guardrail that
 * ignores a provider never receives that provider's audio from the cache). Namespaced by the
 * workspace in the store, never here: the same key in two workspaces is two entries.
 */
export function audioCacheKey(plan: SpeechPlan, endpoints: readonly CatalogEndpoint[]): string {
  return sha256(
    canonical({
      v: 1,
      model: plan.model.id,
      endpoints: endpoints
        .map((e) => `${e.provider}\u0000${e.adapter}\u0000${e.upstreamModel}`)
        .sort(),
      format: plan.format,
      speed: plan.speed,
      instructions: plan.instructions ?? null,
      multiSpeaker: plan.multiSpeaker,
      segments: plan.segments.map((s) => [s.text, s.voice, s.instructions ?? null]),
      references: plan.references.parts.map((p) => [p.kind, sha256(p.value)]),
      providerOptions: plan.providerOptions,
    }),
  );
}
