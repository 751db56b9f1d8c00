import { keyExpiredAt } from "../domain/auth/key-expiry.js";
import { bearerSecret, keyRefusals } from "../domain/auth/key-refusals.js";
import { hashSecret } from "../domain/ids.js";
import { KeyKind } from "../gen/railgate/account/v1/account_pb.js";
import { CALLER_HEADERS } from "../platform/auth/caller-headers.js";
import type { Access, RequestContext } from "./context.js";

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
  if (!header) throw keyRefusals.missing("http");
  const secret = bearerSecret(header);
  if (!secret) throw keyRefusals.malformed("http");
  ctx.call.headers = {
    ...ctx.call.headers,
    authorization: `Bearer ${secret}`,
    [CALLER_HEADERS.ingressRegion]: ctx.region,
  };
  // The answer depends on the region (rule 1), so the cache does too.
  const cacheKey = `${ctx.region}/${hashSecret(secret)}`;
  let key = ctx.keyCache?.get(cacheKey);
  // A cached key past its expires_at goes back to the service, which refuses it with the reason.
  if (key && keyExpiredAt(key)) key = undefined;
  if (!key) {
    key = (await ctx.clients.accounts.authenticate({}, ctx.call)).key;
    if (!key) throw keyRefusals.invalid();
    ctx.keyCache?.set(cacheKey, key);
  }
  // The refusals the services give, with their reasons: the status comes from the one table.
  if (access === "management" && key.kind !== KeyKind.MANAGEMENT)
    throw keyRefusals.managementRequired();
  if (access === "standard" && key.kind !== KeyKind.STANDARD) throw keyRefusals.standardRequired();
  ctx.key = key;
}
