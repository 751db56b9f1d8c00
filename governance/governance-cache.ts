import { timestampMs } from "@bufbuild/protobuf/wkt";
import { replayDataDaysOf, replayDataOf } from "../domain/replay-data.js";
import { type ApiKey, ReplayData, type Workspace } from "../gen/railgate/account/v1/account_pb.js";
import type { Guardrail } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import { componentLogger } from "../platform/observability/logger.js";
import { ScopedCache } from "../platform/scoped-cache.js";
import { ACCOUNT_DOC, type PolicyDocStore, type PolicyType } from "../store/policies/types.js";
import type { Store } from "../store/types.js";
import { type CompiledFilters, sharedCompiledFilters } from "./filters/index.js";
import { effectivePolicy } from "./policy/effective-policy.js";
import { withoutPolicyTypes } from "./policy/guardrail-parts.js";
import { accountPolicies, governingPolicies } from "./policy/policy-guardrails.js";
import type {
  AccountSettings,
  EffectivePolicy,
  GoverningGuardrail,
  GuardrailSource,
} from "./policy/types.js";
import { shadowVersion } from "./shadow-version.js";

const log = componentLogger("governance-cache");

/** A key with everything enforcement needs, resolved once and reused until something changes. */
export interface Principal {
  key: ApiKey;
  /** The key's workspace (or "org" for management keys). */
  scope: string;
  policy: EffectivePolicy;
  filters: CompiledFilters;
  /** The workspace opted in to the audio cache (its audio_cache setting); absent = off. */
  audioCache?: boolean;
  /** What the workspace's records keep for what-if replays (replay_data); absent = none. */
  replayData?: PrincipalReplayData;
  /**
   * The shadows of the guardrails that govern the key, each as the effective policy with the
   * shadow's version in place of the live guardrail; absent when none runs (the common case).
   */
  shadows?: ShadowPolicy[];
}

/** A workspace's replay_data other than none, as enforcement reads it. */
export interface PrincipalReplayData {
  mode: "detections" | "encrypted_input";
  /** encrypted_input: days an input is kept. */
  days: number;
}

function replayDataOfWorkspace(w: Workspace | undefined): PrincipalReplayData | undefined {
  if (!w) return undefined;
  const mode = replayDataOf(w);
  if (mode === ReplayData.DETECTIONS) return { mode: "detections", days: 0 };
  if (mode === ReplayData.ENCRYPTED_INPUT)
    return { mode: "encrypted_input", days: replayDataDaysOf(w) };
  return undefined;
}

/** A guardrail's shadow as enforcement decides it: the policy the key would have under it. */
export interface ShadowPolicy {
  guardrailId: string;
  /** The shadow is a guardrail policy's (guardrailId is the policy's id). */
  isPolicy?: true;
  expiresAtMs: number;
  policy: EffectivePolicy;
  filters: CompiledFilters;
}

/** Entries are dropped by invalidation; the TTL only bounds staleness if pub/sub were ever lost. */
const MAX_AGE_MS = 60_000;
const MAX_ENTRIES = 50_000;

/**
 * The hot path's cache: key -> principal -> effective policy -> compiled
 * filters. A change to any key, guardrail or assignment of a workspace
 * (announced by the store over Redis pub/sub, so on every replica) drops that
 * workspace's entries, so the next request reloads them. An unchanged policy
 * costs no Redis round trip.
 */
export class GovernanceCache {
  private readonly cache = new ScopedCache<Principal>({
    maxEntries: MAX_ENTRIES,
    maxAgeMs: MAX_AGE_MS,
  });
  private readonly unsubscribe: () => void;
  private readonly policyDocs: PolicyDocStore;

  constructor(
    private readonly store: Store,
    private readonly account: AccountSettings,
  ) {
    this.unsubscribe = store.onInvalidate((scope) => this.invalidate(scope));
    this.policyDocs = store.openPolicyDocs();
  }

  close(): void {
    this.unsubscribe();
  }

  invalidate(scope: string): void {
    this.cache.invalidate(scope);
  }

  async get(keyHash: string): Promise<Principal | undefined> {
    const hit = this.cache.get(keyHash);
    if (hit) return hit;
    // The scope is unknown before loading; snapshot every epoch we might compare against.
    const since = this.cache.snapshot();
    const gov = await this.store.loadGovernance(keyHash);
    if (!gov) return undefined;
    const scope = gov.key.workspaceId || "org";
    const governing: GoverningGuardrail[] = [];
    // Guardrail policies of the workspace add theirs (a policy write is announced on its scope too).
    const [own, account] =
      scope === "org"
        ? [undefined, undefined]
        : await Promise.all([this.policyDocs.read(scope), this.policyDocs.read(ACCOUNT_DOC)]);
    // The types the workspace manages through policies are governed by its policies alone: the
    // guardrails' parts of them became policies (one source of truth, whichever API wrote it).
    const managed = own?.doc.managedTypes ?? [];
    const add = (source: GuardrailSource, g: Guardrail | undefined) => {
      if (g) governing.push({ source, guardrail: withoutPolicyTypes(g, managed) });
    };
    add("key", gov.keyGuardrail);
    add("member", gov.memberGuardrail);
    add("workspace_default", gov.defaultGuardrail);
    if (own && account) {
      governing.push(
        ...accountPolicies(account.doc.accountPolicies ?? [], scope),
        ...governingPolicies(own.doc, keyHash, gov.key.memberUserId),
      );
    }
    const policy = effectivePolicy(governing, this.account);
    const filters = compiled(policy, keyHash);
    const shadows = shadowPolicies(governing, managed, this.account, keyHash);
    // A workspace change is announced on the same scope, so its audio_cache setting is as fresh
    // as the key's guardrails (read only when a key's principal is (re)loaded).
    const workspace = scope === "org" ? undefined : await this.store.getWorkspace(scope);
    const replayData = replayDataOfWorkspace(workspace);
    const principal: Principal = {
      key: gov.key,
      scope,
      policy,
      filters,
      audioCache: workspace?.audioCache === true,
      ...(shadows.length > 0 ? { shadows } : {}),
      ...(replayData ? { replayData } : {}),
    };
    // Only cache what no invalidation overtook while it was loading.
    this.cache.set(keyHash, scope, principal, since);
    return principal;
  }
}

function compiled(policy: EffectivePolicy, keyHash: string): CompiledFilters {
  try {
    // Shared by every key whose guardrails carry the same filters: compiled once per version.
    return sharedCompiledFilters.get(policy.filters);
  } catch (err) {
    // Patterns are validated on write; a stored pattern that no longer compiles must not open the gate.
    log.error({ err, keyHash }, "stored content filters do not compile");
    throw err;
  }
}

/**
 * For each governing guardrail that runs a shadow, the effective policy with the shadow's
 * version (the live guardrail with the change applied) substituted for it: built when the
 * principal loads, which a change of the live guardrail makes happen again, so a request pays
 * nothing for it but deciding under it.
 */
function shadowPolicies(
  governing: readonly GoverningGuardrail[],
  managed: readonly PolicyType[],
  account: AccountSettings,
  keyHash: string,
): ShadowPolicy[] {
  const out: ShadowPolicy[] = [];
  governing.forEach((entry, i) => {
    const shadow = shadowOf(entry, managed);
    if (!shadow) return;
    const substituted = governing.map((g, j) =>
      j === i ? { ...g, guardrail: shadow.version } : g,
    );
    const policy = effectivePolicy(substituted, account);
    out.push({
      guardrailId: entry.guardrail.id,
      ...(entry.policy ? { isPolicy: true as const } : {}),
      expiresAtMs: shadow.expiresAtMs,
      policy,
      filters: compiled(policy, keyHash),
    });
  });
  return out;
}

/**
 * The version a governing layer's shadow decides by, when it runs one: a policy's proposed
 * settings alone (a replace leaves nothing of the live ones), or the live guardrail with the
 * change applied, less the types the workspace manages through policies.
 */
function shadowOf(
  entry: GoverningGuardrail,
  managed: readonly PolicyType[],
): { version: Guardrail; expiresAtMs: number } | undefined {
  if (entry.policyShadow) return entry.policyShadow;
  const shadow = entry.guardrail.shadow;
  if (!shadow?.change || !shadow.expiresAt) return undefined;
  return {
    version: withoutPolicyTypes(shadowVersion(entry.guardrail, shadow), managed),
    expiresAtMs: timestampMs(shadow.expiresAt),
  };
}
