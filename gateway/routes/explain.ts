import type { ExplainResponse } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import type { Route } from "../context.js";
import { sendJson } from "../http-io.js";
import { checkQuery } from "../json/fields.js";

function explainToJson(e: ExplainResponse) {
  return {
    key_hash: e.keyHash,
    workspace_id: e.workspaceId,
    region: e.region || null,
    region_allowed: e.regionAllowed ?? null,
    guardrails: e.guardrails.map((g) => ({
      source: g.source,
      id: g.id,
      name: g.name,
      contributes: g.contributes,
    })),
    effective_policy: e.effectivePolicy ?? null,
    budgets: e.budgets.map((b) => ({
      guardrail_id: b.guardrailId,
      guardrail_name: b.guardrailName,
      limit_usd: b.limitUsd,
      reset_interval: b.interval,
      window: b.window,
      spent_usd: b.spentUsd,
      remaining_usd: b.remainingUsd,
      include_byok_in_budgets: b.includeByok,
      scope: b.scope,
      subject: b.subject,
    })),
    credits_usd: e.creditsUsd ?? null,
    models: e.models.map((m) => ({
      model: m.model,
      allowed: m.allowed,
      reason: m.reason || null,
      endpoints: m.endpoints.map((x) => ({
        provider: x.provider,
        eligible: x.eligible,
        reason: x.reason || null,
        price_per_million_chars: x.pricePerMillionChars,
      })),
    })),
  };
}

const EXPLAIN_QUERY = ["model", "region"] as const;

export const explainRoutes: Route[] = [
  {
    // Why a key's requests are allowed or refused (management).
    pattern: "/api/v1/keys/:hash/explain",
    access: "management",
    docs: {
      GET: {
        summary:
          "Why a key's requests are allowed or refused: its guardrails, effective policy, budgets, eligible endpoints",
        query: EXPLAIN_QUERY,
        status: 200,
      },
    },
    methods: {
      async GET(ctx) {
        checkQuery(ctx.url.searchParams, EXPLAIN_QUERY);
        const res = await ctx.clients.speech.explain(
          {
            keyHash: ctx.params.hash ?? "",
            model: ctx.url.searchParams.get("model") ?? "",
            region: ctx.url.searchParams.get("region") ?? "",
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: explainToJson(res) });
      },
    },
  },
];
