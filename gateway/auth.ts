import { KeyKind } from "../gen/railgate/account/v1/account_pb.js";
import { hashSecret } from "../services/common/ids.js";
import type { Access, RequestContext } from "./context.js";
import { HttpError } from "./http-error.js";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Resolves the bearer key and checks it may use a route of the given access level. */
export async function authenticate(ctx: RequestContext, access: Access): Promise<void> {
  if (access === "public") return;
  const header = ctx.req.headers.authorization;
  if (!header) throw new HttpError(401, "Missing API key: send Authorization: Bearer <key>");
  const secret = BEARER.exec(header)?.[1];
  if (!secret) throw new HttpError(401, "Malformed Authorization header: expected Bearer <key>");
  ctx.keyHash = hashSecret(secret);
  if (access === "delegated") return;
  let key = ctx.keyCache?.get(ctx.keyHash);
  if (!key) {
    key = (await ctx.clients.accounts.authenticate({ secret }, { signal: ctx.signal })).key;
    if (!key) throw new HttpError(401, "Invalid API key");
    ctx.keyCache?.set(ctx.keyHash, key);
  }
  if (access === "management" && key.kind !== KeyKind.MANAGEMENT) {
    throw new HttpError(403, "This operation requires a management key");
  }
  if (access === "standard" && key.kind !== KeyKind.STANDARD) {
    throw new HttpError(403, "Management keys cannot call this endpoint: use a standard API key");
  }
  ctx.key = key;
}
