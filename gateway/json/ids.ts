import { canonicalId } from "../../domain/ids.js";

/**
 * The body fields and query parameters that hold ids (workspaces, guardrails, generations,
 * webhooks): UUIDs in any case are taken (RFC 4122) and passed on in lower case, the case they
 * are stored in. By name, never by shape: a session id or a trace field that happens to look
 * like a UUID is the client's own text and stays as sent.
 */
const ID_FIELDS = new Set([
  "id",
  "workspace_id",
  "guardrail_id",
  "policy_id",
  "generation_id",
  "webhook_id",
]);

/** Path parameters: every one that is a UUID or a generation id (keys are addressed by hash). */
export function canonicalParams(params: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(params)) params[name] = canonicalId(value);
  return params;
}

/** The query's id parameters, in place. */
export function canonicalQuery(query: URLSearchParams): void {
  for (const name of ID_FIELDS) {
    const values = query.getAll(name);
    if (values.length === 0) continue;
    const canonical = values.map(canonicalId);
    if (canonical.some((v, i) => v !== values[i])) {
      query.delete(name);
      for (const v of canonical) query.append(name, v);
    }
  }
}

/** A JSON body's top-level id fields, in place. */
export function canonicalBodyIds(body: Record<string, unknown>): Record<string, unknown> {
  for (const name of ID_FIELDS) {
    const v = Object.hasOwn(body, name) ? body[name] : undefined;
    if (typeof v === "string") body[name] = canonicalId(v);
  }
  return body;
}
