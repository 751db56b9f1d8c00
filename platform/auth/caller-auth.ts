import { createHash, timingSafeEqual } from "node:crypto";
import { createContextKey, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { KeyKind } from "../../gen/railgate/account/v1/account_pb.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import type { Principal } from "../../governance/governance-cache.js";
import { invalidArgument, permissionDenied, unauthenticated } from "../errors.js";
import { hashSecret } from "../ids.js";
import { admissionRefusals } from "../metrics.js";
import { isRegionName, quotedRegionNames, type RegionName } from "../regions.js";
import { CALLER_HEADERS } from "./caller-headers.js";
import { peerVerifiedKey } from "./peer-identity.js";

/**
 * Who may call an RPC:
 * - "public": anyone (a credential, if sent, is ignored);
 * - "management" / "standard": an enabled key of that kind;
 * - "any-key": any enabled key;
 * - "gateway": a Railgate gateway (the service credential) or a management key.
 */
export type RpcAccess = "public" | "management" | "standard" | "any-key" | "gateway";

/** What a handler knows about its caller, set by the interceptor before the handler runs. */
export interface Caller {
  /** Absent only on public RPCs and on gateway-access calls made with the service credential alone. */
  principal?: Principal;
  /** The region the request entered through: asserted by a gateway, else the listener's. */
  region: RegionName;
  /** The call proved it comes from a Railgate gateway. */
  viaGateway: boolean;
}

const callerContextKey = createContextKey<Caller | undefined>(undefined, {
  description: "authenticated caller",
});

/** The caller of an RPC whose access is not "public"; throws if the interceptor did not run. */
export function callerOf(ctx: HandlerContext): Caller & { principal: Principal } {
  const caller = ctx.values.get(callerContextKey);
  if (!caller?.principal)
    throw unauthenticated(
      ErrorReason.API_KEY_MISSING,
      "Missing API key: send authorization: Bearer <key>",
    );
  return caller as Caller & { principal: Principal };
}

/** Resolves a key hash to the key and its effective policy (cached, invalidated on change). */
export interface PrincipalSource {
  get(keyHash: string): Promise<Principal | undefined>;
}

export interface CallerAuthOptions {
  principals: PrincipalSource;
  /** The shared secret of Railgate gateways; unset = no caller may assert a region. */
  internalToken?: string;
  /** The ingress region of every caller that is not a gateway. */
  listenerRegion: RegionName;
  /**
   * Access per "<service type name>/<method name>" (or "<service type name>/*");
   * a method not listed needs a management key.
   */
  access: Record<string, RpcAccess>;
  /** Called for a key the store does not know; true = it was registered again (the operator's). */
  recover?: (keyHash: string) => Promise<boolean>;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

function digest(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}

/** The 403 of region rule 1, naming the guardrails that restrict the regions. */
export function regionRefusal(principal: Principal, region: RegionName): string | undefined {
  const allowed = principal.policy.regions;
  if (!allowed || allowed.has(region)) return undefined;
  const by = principal.policy.guardrails
    .filter((g) => g.guardrail.allowedDataRegions)
    .map((g) => `"${g.guardrail.name}"`)
    .join(", ");
  return `Requests through region "${region}" are not allowed by guardrail ${by} (allowed_data_regions: ${[...allowed].join(", ") || "none"})`;
}

/**
 * Authenticates every RPC from its metadata before its handler runs: the same
 * bearer keys and management/standard rules as the HTTP API, looked up by
 * hash through the cached principal source. Messages never name the caller.
 * Only a caller holding the service credential may assert its ingress region;
 * every other caller is in the region of the listener it reached. Region rule
 * 1 (a governed key must arrive through an allowed region) applies to every
 * call made with a key.
 */
export function callerAuthInterceptor(options: CallerAuthOptions): Interceptor {
  const token = options.internalToken ? digest(options.internalToken) : undefined;
  return (next) => async (req) => {
    const access =
      options.access[`${req.service.typeName}/${req.method.name}`] ??
      options.access[`${req.service.typeName}/*`] ??
      "management";
    const presented = req.header.get(CALLER_HEADERS.internalToken);
    // A client certificate from the gateways' CA proves a gateway as well as the token does.
    let viaGateway = req.contextValues.get(peerVerifiedKey);
    if (presented !== null) {
      if (!token || !timingSafeEqual(digest(presented), token)) {
        throw unauthenticated(
          ErrorReason.GATEWAY_TOKEN_INVALID,
          `Invalid ${CALLER_HEADERS.internalToken}`,
        );
      }
      viaGateway = true;
    }
    const asserted = req.header.get(CALLER_HEADERS.ingressRegion);
    let region = options.listenerRegion;
    if (asserted !== null) {
      if (!viaGateway) {
        throw permissionDenied(
          ErrorReason.GATEWAY_CREDENTIAL_REQUIRED,
          `${CALLER_HEADERS.ingressRegion} may only be asserted by a Railgate gateway (${CALLER_HEADERS.internalToken} or a client certificate)`,
        );
      }
      if (!isRegionName(asserted)) {
        throw invalidArgument(
          `${CALLER_HEADERS.ingressRegion} must be ${quotedRegionNames(" or ")}`,
        );
      }
      region = asserted;
    }
    const caller: Caller = { region, viaGateway };
    req.contextValues.set(callerContextKey, caller);
    if (access === "public") return next(req);
    const header = req.header.get("authorization");
    if (header === null) {
      if (access === "gateway" && viaGateway) return next(req);
      throw unauthenticated(
        ErrorReason.API_KEY_MISSING,
        "Missing API key: send authorization: Bearer <key>",
      );
    }
    const secret = BEARER.exec(header)?.[1];
    if (!secret)
      throw unauthenticated(
        ErrorReason.API_KEY_MALFORMED,
        "Malformed authorization metadata: expected Bearer <key>",
      );
    const hash = hashSecret(secret);
    let principal = await options.principals.get(hash);
    if (!principal && (await options.recover?.(hash)))
      principal = await options.principals.get(hash);
    if (!principal) throw unauthenticated(ErrorReason.API_KEY_INVALID, "Invalid API key");
    if (principal.key.disabled)
      throw unauthenticated(ErrorReason.API_KEY_DISABLED, "API key is disabled");
    const kind = principal.key.kind;
    if ((access === "management" || access === "gateway") && kind !== KeyKind.MANAGEMENT) {
      throw permissionDenied(
        ErrorReason.MANAGEMENT_KEY_REQUIRED,
        "This operation requires a management key",
      );
    }
    if (access === "standard" && kind !== KeyKind.STANDARD) {
      throw permissionDenied(
        ErrorReason.STANDARD_KEY_REQUIRED,
        "Management keys cannot call this endpoint: use a standard API key",
      );
    }
    const refusal = regionRefusal(principal, region);
    if (refusal) {
      admissionRefusals.labels("region").inc();
      throw permissionDenied(ErrorReason.REGION_NOT_ALLOWED, refusal);
    }
    caller.principal = principal;
    return next(req);
  };
}
