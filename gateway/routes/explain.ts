import type { ExplainResponse } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { REGION_NAMES } from "../../platform/regions.js";
import type { Route } from "../context.js";
import { sendJson } from "../http-io.js";
import { checkQuery } from "../json/fields.js";
import {
  arrayOf,
  BOOLEAN,
  dataOf,
  NUMBER,
  orNull,
  STRING,
  shapeOf,
} from "../openapi/spec-schema.js";

type ExplainJson = ReturnType<typeof explainToJson>;
type Item<L> = L extends readonly (infer T)[] ? T : never;
const NULLABLE_STRING = orNull(STRING);

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

/** What explainToJson renders; shapeOf makes a field added there without its schema a compile error. */
const EXPLAIN_SCHEMA = shapeOf<ExplainJson>({
  key_hash: STRING,
  workspace_id: STRING,
  region: orNull({ enum: REGION_NAMES }),
  region_allowed: orNull(BOOLEAN),
  guardrails: arrayOf(
    shapeOf<Item<ExplainJson["guardrails"]>>({
      source: STRING,
      id: STRING,
      name: STRING,
      contributes: BOOLEAN,
    }),
  ),
  effective_policy: { type: ["object", "null"] },
  budgets: arrayOf(
    shapeOf<Item<ExplainJson["budgets"]>>({
      guardrail_id: STRING,
      guardrail_name: STRING,
      limit_usd: NUMBER,
      reset_interval: STRING,
      window: STRING,
      spent_usd: NUMBER,
      remaining_usd: NUMBER,
      include_byok_in_budgets: BOOLEAN,
      scope: STRING,
      subject: STRING,
    }),
  ),
  credits_usd: orNull(NUMBER),
  models: arrayOf(
    shapeOf<Item<ExplainJson["models"]>>({
      model: STRING,
      allowed: BOOLEAN,
      reason: NULLABLE_STRING,
      endpoints: arrayOf(
        shapeOf<Item<Item<ExplainJson["models"]>["endpoints"]>>({
          provider: STRING,
          eligible: BOOLEAN,
          reason: NULLABLE_STRING,
          price_per_million_chars: NUMBER,
        }),
      ),
    }),
  ),
});

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
        queryRules: { region: { enum: REGION_NAMES } },
        status: 200,
        response: dataOf(EXPLAIN_SCHEMA),
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
