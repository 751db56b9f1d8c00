import { hash, timingSafeEqual } from "node:crypto";
import { type DescMethod, getOption } from "@bufbuild/protobuf";
import {
  type ConnectError,
  createContextKey,
  type HandlerContext,
  type Interceptor,
  type StreamRequest,
  type UnaryRequest,
} from "@connectrpc/connect";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { type ApiKey, KeyKind } from "../../gen/railgate/account/v1/account_pb.js";
import { Access, access } from "../../gen/railgate/common/v1/access_pb.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import type { Guardrail } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { CALLER_HEADERS } from "../../platform/auth/caller-headers.js";
import { peerVerifiedKey } from "../../platform/auth/peer-identity.js";
import { invalidArgument, permissionDenied, unauthenticated } from "../../platform/rpc/errors.js";
import { isRegionName, quotedRegionNames, type RegionName } from "../enums.js";
import { hashSecret } from "../ids.js";
import { keyExpiredAt, keyExpiredMessage } from "./key-expiry.js";
import { bearerSecret, keyRefusals } from "./key-refusals.js";

/**
 * Who may call an RPC:
 * - "public": anyone (a credential, if sent, is ignored);
 * - "management" / "standard": an enabled key of that kind;
 * - "any-key": any enabled key;
 * - "gateway": a Railgate gateway (the service credential) or a management key.
 */
export type RpcAccess = "public" | "management" | "standard" | "any-key" | "gateway";

const ACCESS_NAMES: Readonly<Record<Access, RpcAccess>> = {
  [Access.UNSPECIFIED]: "management",
  [Access.MANAGEMENT]: "management",
  [Access.STANDARD]: "standard",
  [Access.ANY_KEY]: "any-key",
  [Access.GATEWAY]: "gateway",
  [Access.PUBLIC]: "public",
};

/**
 * An RPC's access, as its method states it in the proto (the `railgate.common.v1.access`
 * option, the one place it is declared); a method stating none needs a management key. The
 * standard grpc.health.v1 service, not ours to annotate, is public.
 */
export function rpcAccess(method: DescMethod): RpcAccess {
  let known = accessOf.get(method);
  if (known === undefined) {
    known =
      method.parent.typeName === Health.typeName
        ? "public"
        : ACCESS_NAMES[getOption(method, access)];
    accessOf.set(method, known);
  }
  return known;
}

/** Read once per method: getOption decodes the option (an extension container) on every call. */
const accessOf = new WeakMap<DescMethod, RpcAccess>();

/**
 * What authentication reads of a principal: its key, and the regions its governing guardrails
 * allow. The principal a service resolves (governance/governance-cache.ts) carries more, the
 * whole effective policy and the compiled filters; that type lives above this layer, so the
 * interceptor and callerOf are generic over it.
 */
export interface AuthPrincipal {
  key: ApiKey;
  policy: {
    /** null = every region. */
    regions: ReadonlySet<RegionName> | null;
    guardrails: readonly { guardrail: Pick<Guardrail, "name" | "allowedDataRegions"> }[];
  };
}

/** What a handler knows about its caller, set by the interceptor before the handler runs. */
export interface Caller<Principal extends AuthPrincipal = AuthPrincipal> {
  /** Absent only on public RPCs and on gateway-access calls made with the service credential alone. */
  principal?: Principal;
  /** The region the request entered through: asserted by a gateway, else the listener's. */
  region: RegionName;
  /** The call proved it comes from a Railgate gateway. */
  viaGateway: boolean;
}

const callerContextKey = createContextKey<Caller<AuthPrincipal> | undefined>(undefined, {
  description: "authenticated caller",
});

/**
 * The caller of an RPC whose access is not "public"; throws if the interceptor did not run.
 * `Principal` is what the server's PrincipalSource resolves (the interceptor stored it).
 */
export function callerOf<Principal extends AuthPrincipal = AuthPrincipal>(
  ctx: HandlerContext,
): Caller<Principal> & { principal: Principal } {
  const caller = ctx.values.get(callerContextKey);
  if (!caller?.principal) throw keyRefusals.missing("grpc");
  return caller as Caller<Principal> & { principal: Principal };
}

/** Resolves a key hash to the key and its effective policy (cached, invalidated on change). */
export interface PrincipalSource<Principal extends AuthPrincipal = AuthPrincipal> {
  get(keyHash: string): Promise<Principal | undefined>;
}

export interface CallerAuthOptions<Principal extends AuthPrincipal = AuthPrincipal> {
  principals: PrincipalSource<Principal>;
  /** The shared secret of Railgate gateways; unset = no caller may assert a region. */
  internalToken?: string;
  /** The ingress region of every caller that is not a gateway. */
  listenerRegion: RegionName;
  /** Called for a key the store does not know; true = it was registered again (the operator's). */
  recover?: (keyHash: string) => Promise<boolean>;
  /**
   * Told of every call of a known key refused because the key is disabled or expired or by
   * region rule 1, and awaited before the refusal is thrown: the speech service records
   * refused speech requests before the client hears of them. Must not throw.
   */
  onKeyRefused?: (refused: KeyRefused<Principal>) => Promise<void>;
}

/** A call of a known key refused before its handler ran, with the refusal the caller gets. */
export interface KeyRefused<Principal extends AuthPrincipal = AuthPrincipal> {
  principal: Principal;
  region: RegionName;
  method: string;
  /** The call's request message (a server stream's one message); undefined for client streams. */
  message: unknown;
  error: ConnectError;
}

/**
 * The request message of a refused call: a server-streaming call's one message arrives as a
 * stream and is read here (the call is refused, nothing else will read it). Client streams
 * are not read.
 */
async function refusedMessage(req: UnaryRequest | StreamRequest): Promise<unknown> {
  if (!req.stream) return req.message;
  if (req.method.methodKind !== "server_streaming") return undefined;
  for await (const m of req.message) return m;
  return undefined;
}

/** Tells onKeyRefused (when there is one) of a known key's refused call, then throws the refusal. */
async function refused<Principal extends AuthPrincipal>(
  options: CallerAuthOptions<Principal>,
  req: UnaryRequest | StreamRequest,
  principal: Principal,
  region: RegionName,
  error: ConnectError,
): Promise<never> {
  if (options.onKeyRefused) {
    const message = await refusedMessage(req);
    await options.onKeyRefused({ principal, region, method: req.method.name, message, error });
  }
  throw error;
}

function digest(s: string): Buffer {
  return hash("sha256", s, "buffer");
}

/** The 403 of region rule 1, naming the guardrails that restrict the regions. */
export function regionRefusal(principal: AuthPrincipal, region: RegionName): string | undefined {
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
export function callerAuthInterceptor<Principal extends AuthPrincipal>(
  options: CallerAuthOptions<Principal>,
): Interceptor {
  const token = options.internalToken ? digest(options.internalToken) : undefined;
  return (next) => async (req) => {
    const access = rpcAccess(req.method);
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
    const caller: Caller<Principal> = { region, viaGateway };
    req.contextValues.set(callerContextKey, caller);
    if (access === "public") return next(req);
    const header = req.header.get("authorization");
    if (header === null) {
      if (access === "gateway" && viaGateway) return next(req);
      throw keyRefusals.missing("grpc");
    }
    const secret = bearerSecret(header);
    if (!secret) throw keyRefusals.malformed("grpc");
    const hash = hashSecret(secret);
    let principal = await options.principals.get(hash);
    if (!principal && (await options.recover?.(hash)))
      principal = await options.principals.get(hash);
    if (!principal) throw keyRefusals.invalid();
    // The refusals of a key that exists are told to onKeyRefused before they are thrown.
    if (principal.key.disabled)
      return refused(options, req, principal, region, keyRefusals.disabled());
    const expiredAt = keyExpiredAt(principal.key);
    if (expiredAt) {
      const error = unauthenticated(ErrorReason.API_KEY_EXPIRED, keyExpiredMessage(expiredAt));
      return refused(options, req, principal, region, error);
    }
    const kind = principal.key.kind;
    if ((access === "management" || access === "gateway") && kind !== KeyKind.MANAGEMENT)
      throw keyRefusals.managementRequired();
    if (access === "standard" && kind !== KeyKind.STANDARD) throw keyRefusals.standardRequired();
    const refusal = regionRefusal(principal, region);
    if (refusal) {
      const error = permissionDenied(ErrorReason.REGION_NOT_ALLOWED, refusal);
      return refused(options, req, principal, region, error);
    }
    caller.principal = principal;
    return next(req);
  };
}
