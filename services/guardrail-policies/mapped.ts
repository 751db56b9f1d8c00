import { create } from "@bufbuild/protobuf";
import {
  type GuardrailPolicy,
  GuardrailPolicySchema,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { guardrailPart } from "../../governance/policy/guardrail-parts.js";
import type { PolicyType } from "../../store/policies/types.js";
import type { Store } from "../../store/types.js";

/** Guardrails and assignments are read in pages of this size (a workspace's counts are bounded). */
const PAGE = 500;

async function allPages<T>(page: (offset: number) => Promise<{ items: T[]; total: number }>) {
  const out: T[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const { items, total } = await page(offset);
    out.push(...items);
    if (items.length === 0 || out.length >= total) return out;
  }
}

/**
 * The read-only policies of one type that a workspace's guardrails map to (OpenRouter's
 * migration: every guardrail also appears as up to three policies). A mapped policy has the
 * guardrail's id, name and assignments; it changes only through the guardrails API.
 */
export async function mappedPolicies(
  store: Store,
  workspaceId: string,
  type: PolicyType,
): Promise<GuardrailPolicy[]> {
  const guardrails = await allPages((offset) => store.listGuardrails(workspaceId, offset, PAGE));
  const out: GuardrailPolicy[] = [];
  for (const g of guardrails) {
    const config = guardrailPart(g, type);
    if (!config) continue;
    const subjects = async (kind: "key" | "member") =>
      (
        await allPages((offset) => store.listAssignments(kind, workspaceId, g.id, offset, PAGE))
      ).map((a) => a.subject);
    out.push(
      create(GuardrailPolicySchema, {
        id: g.id,
        workspaceId,
        policyType: type,
        name: g.name,
        config: config as GuardrailPolicy["config"],
        apiKeyHashes: await subjects("key"),
        memberIds: await subjects("member"),
        isWorkspaceDefault: g.isWorkspaceDefault,
        updatedAt: g.updatedAt ?? g.createdAt,
        legacyGuardrailIds: [g.id],
      }),
    );
  }
  return out;
}
