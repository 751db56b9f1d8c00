import { KeyKind } from "../gen/railgate/account/v1/account_pb.js";
import { CALLER_HEADERS } from "../platform/auth/caller-headers.js";
import { hashSecret } from "../platform/ids.js";
import type { Access, RequestContext } from "./context.js";
import { HttpError } from "./http-error.js";

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * Resolves the bearer key and checks it may use a route of the given access
 * level, before any body is read: a stranger costs one cached lookup, never a
 * parse. The key and the listener's region also go into `ctx.call`, so every
 * service call re-authenticates the client itself (the services trust no
 * message field), and the services' region rule 1 refuses a governed key that
 * arrived through a region its guardrails do not allow.
 */
export async function authenticate(ctx: RequestContext, access: Access): Promise<void> {
  if (access === "public") return;
  const header = ctx.req.headers.authorization;
  if (!header) throw new HttpError(401, "Missing API key: send Authorization: Bearer <key>");
  const secret = BEARER.exec(header)?.[1];
  if (!secret) throw new HttpError(401, "Malformed Authorization header: expected Bearer <key>");
  ctx.call.headers = {
    ...ctx.call.headers,
    authorization: `Bearer ${secret}`,
    [CALLER_HEADERS.ingressRegion]: ctx.region,
  };
  // The answer depends on the region (rule 1), so the cache does too.
  const cacheKey = `${ctx.region}/${hashSecret(secret)}`;
  let key = ctx.keyCache?.get(cacheKey);
  if (!key) {
    key = (await ctx.clients.accounts.authenticate({}, ctx.call)).key;
    if (!key) throw new HttpError(401, "Invalid API key");
    ctx.keyCache?.set(cacheKey, key);
  }
  if (access === "management" && key.kind !== KeyKind.MANAGEMENT) {
    throw new HttpError(403, "This operation requires a management key");
  }
  if (access === "standard" && key.kind !== KeyKind.STANDARD) {
    throw new HttpError(403, "Management keys cannot call this endpoint: use a standard API key");
  }
  ctx.key = key;
}
