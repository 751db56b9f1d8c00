import type { Model } from "../../gen/railgate/speech/v1/speech_pb.js";
import { SpeechService } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { quote } from "../../platform/quote.js";
import type { RequestContext, Route } from "../context.js";
import { HttpError } from "../http-error.js";
import { sendJson } from "../http-io.js";
import { checkQuery } from "../json/fields.js";
import {
  findModel,
  MODEL_ENDPOINTS_JSON_SCHEMA,
  MODEL_JSON_SCHEMA,
  modelEndpointsToJson,
  modelToJson,
  PUBLIC_ENDPOINT_JSON_SCHEMA,
  selectModels,
  zdrEndpointsToJson,
} from "../json/model-json.js";
import {
  MODEL_FILTER_PARAMS,
  MODEL_LIST_PARAMS,
  MODEL_QUERY_RULES,
  parseModelQuery,
} from "../json/model-query.js";
import { arrayOf, dataOf, orNull, STRING, shapeOf } from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

const MODEL_LIST_SCHEMA = shapeOf<{ data: unknown; total_count: unknown; links: unknown }>({
  data: arrayOf(MODEL_JSON_SCHEMA),
  total_count: { type: "integer", minimum: 0 },
  links: shapeOf<{ next: unknown }>({ next: orNull(STRING) }),
});
const MODEL_COUNT_SCHEMA = dataOf(
  shapeOf<{ count: unknown }>({ count: { type: "integer", minimum: 0 } }),
);

/** The speech catalog (SpeechService.ListModels): public, like OpenRouter's model list. */
async function catalog(ctx: RequestContext): Promise<Model[]> {
  return (await ctx.clients.speech.listModels({}, { signal: ctx.signal })).models;
}

/** `{author}/{slug}` by id or alias; 404 naming it otherwise. */
async function modelAt(ctx: RequestContext): Promise<Model> {
  checkQuery(ctx.url.searchParams, []);
  const id = `${ctx.params.author}/${ctx.params.slug}`;
  const model = findModel(await catalog(ctx), id);
  if (!model) throw new HttpError(404, `model ${quote(id)} not found`);
  return model;
}

/** The models the calling key's guardrails leave it (SpeechService.ListUserModels). */
async function userCatalog(ctx: RequestContext): Promise<Model[]> {
  return (await ctx.clients.speech.listUserModels({}, ctx.call)).models;
}

/** GET /models and /models/user: the same filters and paging over a list of models. */
function sendModelList(ctx: RequestContext, models: Model[]): void {
  const query = parseModelQuery(ctx.url.searchParams, true);
  const selected = selectModels(models, query, new Date());
  const page = selected.slice(
    query.offset,
    query.limit === undefined ? undefined : query.offset + query.limit,
  );
  sendJson(ctx.res, 200, {
    data: page.map(modelToJson),
    total_count: selected.length,
    links: { next: nextLink(ctx.url, query.offset, page.length, selected.length) },
  });
}

/** The next page's address, the same query with the offset moved on; null on the last page. */
function nextLink(url: URL, offset: number, shown: number, total: number): string | null {
  if (offset + shown >= total || shown === 0) return null;
  const params = new URLSearchParams(url.searchParams);
  params.set("offset", String(offset + shown));
  return `${url.pathname}?${params}`;
}

const one: Route["methods"] = {
  async GET(ctx) {
    sendJson(ctx.res, 200, { data: modelToJson(await modelAt(ctx)) });
  },
};

const oneDocs: Route["docs"] = {
  GET: {
    summary: "A speech model by id or alias",
    status: 200,
    response: dataOf(MODEL_JSON_SCHEMA),
  },
};

export const modelRoutes: Route[] = [
  {
    pattern: "/api/v1/models",
    access: accessOf(SpeechService.method.listModels),
    docs: {
      GET: {
        summary: "List speech models (OpenRouter's filters)",
        query: MODEL_LIST_PARAMS,
        queryRules: MODEL_QUERY_RULES,
        status: 200,
        response: MODEL_LIST_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        // Checked before the catalog is fetched: a bad query costs no call.
        parseModelQuery(ctx.url.searchParams, true);
        sendModelList(ctx, await catalog(ctx));
      },
    },
  },
  {
    // OpenRouter's models for the calling key: what its guardrails leave it.
    pattern: "/api/v1/models/user",
    access: accessOf(SpeechService.method.listUserModels),
    docs: {
      GET: {
        summary:
          "The models the calling key may use under its guardrails (each with its allowed endpoints)",
        query: MODEL_LIST_PARAMS,
        queryRules: MODEL_QUERY_RULES,
        status: 200,
        response: MODEL_LIST_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        parseModelQuery(ctx.url.searchParams, true);
        sendModelList(ctx, await userCatalog(ctx));
      },
    },
  },
  {
    pattern: "/api/v1/endpoints/zdr",
    access: accessOf(SpeechService.method.listModels),
    docs: {
      GET: {
        summary: "Every endpoint with zero data retention (OpenRouter's PublicEndpoint shape)",
        status: 200,
        response: dataOf(arrayOf(PUBLIC_ENDPOINT_JSON_SCHEMA)),
      },
    },
    methods: {
      async GET(ctx) {
        checkQuery(ctx.url.searchParams, []);
        sendJson(ctx.res, 200, { data: zdrEndpointsToJson(await catalog(ctx)) });
      },
    },
  },
  {
    pattern: "/api/v1/models/count",
    access: accessOf(SpeechService.method.listModels),
    docs: {
      GET: {
        summary: "Count the models matching the filters",
        query: MODEL_FILTER_PARAMS,
        queryRules: MODEL_QUERY_RULES,
        status: 200,
        response: MODEL_COUNT_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        const query = parseModelQuery(ctx.url.searchParams, false);
        const selected = selectModels(await catalog(ctx), query, new Date());
        sendJson(ctx.res, 200, { data: { count: selected.length } });
      },
    },
  },
  // The SDK's models.get() asks /model/{author}/{slug}; /models/{author}/{slug} is the same.
  {
    pattern: "/api/v1/model/:author/:slug",
    access: accessOf(SpeechService.method.listModels),
    methods: one,
    docs: oneDocs,
  },
  {
    pattern: "/api/v1/models/:author/:slug",
    access: accessOf(SpeechService.method.listModels),
    methods: one,
    docs: oneDocs,
  },
  {
    pattern: "/api/v1/models/:author/:slug/endpoints",
    access: accessOf(SpeechService.method.listModels),
    docs: {
      GET: {
        summary: "A model's endpoints (providers, prices, regions)",
        status: 200,
        response: dataOf(MODEL_ENDPOINTS_JSON_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        sendJson(ctx.res, 200, { data: modelEndpointsToJson(await modelAt(ctx)) });
      },
    },
  },
];
