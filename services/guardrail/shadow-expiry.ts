import { timestampDate, timestampMs } from "@bufbuild/protobuf/wkt";
import type { Guardrail } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import type { GetGuardrailShadowResponse } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import {
  type ShadowNotice,
  type ShadowSource,
  shadowExpiredData,
} from "../../governance/alerts/shadow-expiry.js";
import type { Page } from "../../store/types.js";

const PAGE = 500;

/** What the sweep reads of guardrails. */
export interface GuardrailShadowDeps {
  /** Every guardrail of every workspace, a page at a time (the store's listing). */
  listGuardrails(workspaceId: undefined, offset: number, limit: number): Promise<Page<Guardrail>>;
  /** The shadow's report as GET .../shadow answers it. */
  report(guardrailId: string): Promise<GetGuardrailShadowResponse>;
}

function onceKeyOf(guardrailId: string, startedAtMs: number): string {
  return `shadow_expired:${guardrailId}:${startedAtMs}`;
}

/** A guardrail shadow's report as guardrail.shadow_expired announces it (none without times). */
export function guardrailShadowNotice(
  workspaceId: string,
  guardrailId: string,
  r: GetGuardrailShadowResponse,
): ShadowNotice | undefined {
  const s = r.shadow;
  if (!s?.startedAt || !s.expiresAt) return undefined;
  return {
    type: "guardrail.shadow_expired",
    workspaceId,
    onceKey: onceKeyOf(guardrailId, timestampMs(s.startedAt)),
    expiresAtMs: timestampMs(s.expiresAt),
    expired: r.expired,
    data: {
      guardrail_id: guardrailId,
      shadow: shadowExpiredData(r, {
        updateMask: s.updateMask,
        startedAt: timestampDate(s.startedAt),
        expiresAt: timestampDate(s.expiresAt),
      }),
    },
  };
}

/** Every guardrail's shadow, for the expiry sweep (governance/alerts/shadow-expiry.ts). */
export function guardrailShadows(deps: GuardrailShadowDeps): ShadowSource {
  return {
    async scan(found) {
      for (let offset = 0; ; offset += PAGE) {
        const page = await deps.listGuardrails(undefined, offset, PAGE);
        for (const g of page.items) {
          const s = g.shadow;
          if (!s?.startedAt || !s.expiresAt) continue;
          await found({
            workspaceId: g.workspaceId,
            onceKey: onceKeyOf(g.id, timestampMs(s.startedAt)),
            expiresAtMs: timestampMs(s.expiresAt),
            report: async () => guardrailShadowNotice(g.workspaceId, g.id, await deps.report(g.id)),
            logged: { guardrailId: g.id },
          });
        }
        if (page.items.length < PAGE) return;
      }
    },
  };
}
