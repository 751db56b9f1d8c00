import { MODEL_FILTER_PARAMS } from "../../../../gateway/json/model-query.js";
import { apiCommands, OFFSET_PAGING, q } from "../api-command.js";

/** Every filter GET /models takes (OpenRouter's), each as its name in kebab case. */
const FILTERS = MODEL_FILTER_PARAMS.map((name) => q(name.replaceAll("_", "-"), name));
const COLUMNS = ["id", "name", "created", "context_length"];

/** The speech model catalog (public, except what a key may use). */
export const modelApiCommands = apiCommands([
  {
    words: "models list",
    summary: "speech models (OpenRouter's filters: --q, --providers, --max-price, --sort, ...)",
    method: "GET",
    path: "/api/v1/models",
    query: [...OFFSET_PAGING, ...FILTERS],
    columns: COLUMNS,
  },
  {
    words: "models count",
    summary: "how many models match the filters",
    method: "GET",
    path: "/api/v1/models/count",
    query: FILTERS,
  },
  {
    words: "models mine",
    summary: "the models the calling key may use under its guardrails (a standard key)",
    method: "GET",
    path: "/api/v1/models/user",
    query: [...OFFSET_PAGING, ...FILTERS],
    columns: COLUMNS,
  },
  {
    words: "models get",
    summary: "a model by id or alias (author/slug)",
    method: "GET",
    path: "/api/v1/models/:author/:slug",
    modelArg: true,
  },
  {
    words: "models endpoints",
    summary: "a model's endpoints: providers, prices, regions",
    method: "GET",
    path: "/api/v1/models/:author/:slug/endpoints",
    modelArg: true,
  },
  {
    words: "models zdr",
    summary: "every endpoint with zero data retention",
    method: "GET",
    path: "/api/v1/endpoints/zdr",
    columns: ["model_id", "provider_name", "name"],
  },
]);
