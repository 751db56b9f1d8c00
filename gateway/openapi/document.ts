import { readFileSync } from "node:fs";
import {
  AUDIO_FORMAT_NAMES,
  type AudioFormatName,
  audioContentType,
} from "../../domain/audio-formats.js";
import { IDEMPOTENCY_KEY_MAX_CHARS, IDEMPOTENCY_TTL_SECONDS } from "../../domain/idempotency.js";
import { ACCOUNT_LIMITS, COUNT_LIMITS } from "../../domain/limits.js";
import type { Access, OperationDoc, Route } from "../context.js";
import { CORS_ALLOWED_HEADERS } from "../cors.js";
import { takesIdempotencyKey } from "../idempotency.js";
import { PAGE_QUERY_RULES } from "../json/fields.js";
import { speechBodySchema } from "../json/speech-json.js";
import type { JsonSchema } from "./spec-schema.js";
import { TAGS, tagOf } from "./tags.js";

/** The package's version: the document describes the API this build serves. */
function packageVersion(): string {
  const pkg = JSON.parse(
    readFileSync(new URL("../../../package.json", import.meta.url), "utf8"),
  ) as { version: string };
  return pkg.version;
}

/** Pages and their static files (the console's, /docs'): served, but not operations of the API. */
const NOT_API = new Set(["html", "asset"]);

/** Whether a route is part of the API the document describes (not a page or its files). */
export function isApiRoute(route: Route): boolean {
  return Object.values(route.docs ?? {}).some((doc) => !NOT_API.has(doc?.produces ?? "json"));
}

/** "/api/v1/keys/:hash" -> "/api/v1/keys/{hash}" and its parameter names. */
export function openApiPath(pattern: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = pattern
    .split("/")
    .map((seg) => {
      if (!seg.startsWith(":")) return seg;
      params.push(seg.slice(1));
      return `{${seg.slice(1)}}`;
    })
    .join("/");
  return { path, params };
}

const ERROR_SCHEMA: JsonSchema = {
  type: "object",
  required: ["error"],
  additionalProperties: false,
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      additionalProperties: false,
      properties: {
        code: { type: "integer", minimum: 400, maximum: 599, description: "The HTTP status" },
        message: { type: "string", description: "Names the field or rule at fault" },
        metadata: {
          type: "object",
          description: "Facts for the client, when the service gave some",
        },
      },
    },
  },
};

const RATE_LIMIT_HEADERS = {
  "RateLimit-Limit": {
    description: "Requests per minute the key may make",
    schema: { type: "integer" },
  },
  "RateLimit-Remaining": {
    description: "Requests left in the current window, this one counted",
    schema: { type: "integer" },
  },
  "RateLimit-Reset": {
    description: "Seconds until the window ends",
    schema: { type: "integer" },
  },
};

/** The store's count limits, from the constants it enforces: a create past one answers 409. */
const COUNT_LIMITS_NOTE = `Count limits (409 beyond): ${COUNT_LIMITS.workspaces} workspaces; per workspace ${COUNT_LIMITS.guardrailsPerWorkspace} guardrails, ${COUNT_LIMITS.keysPerWorkspace} keys, ${COUNT_LIMITS.memberAssignmentsPerWorkspace} member assignments, ${ACCOUNT_LIMITS.membersPerWorkspaceMax} added members; ${COUNT_LIMITS.managementKeys} management keys.`;

/** Who may call: public routes need nothing; the others a key of the route's kind. */
const ACCESS_NOTE: Record<Access, string> = {
  public: "Public: no key.",
  management: "Needs a management key.",
  standard: "Needs a standard (inference) key.",
  "any-key": "Any valid key.",
};

function errorResponse(description: string): JsonSchema {
  return {
    description,
    content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
  };
}

function successResponse(route: Route, method: string, doc: OperationDoc): JsonSchema {
  const description = doc.description ?? "Success";
  switch (doc.produces) {
    case "audio":
      return {
        description,
        headers: {
          "X-Generation-Id": { schema: { type: "string" } },
          "X-Railgate-Model": { schema: { type: "string" } },
          "X-Railgate-Provider": { schema: { type: "string" } },
          ...RATE_LIMIT_HEADERS,
        },
        // One media type per response_format (parameters such as pcm's rate are not part of the key).
        content: Object.fromEntries(
          AUDIO_FORMAT_NAMES.map((f) => [
            audioContentType(f).split(";")[0],
            { schema: { type: "string", format: "binary" } },
          ]),
        ),
      };
    case "prometheus":
      return {
        description,
        content: { "text/plain; version=0.0.4": { schema: { type: "string" } } },
      };
    default:
      // A JSON route without its response shape fails the build, like one without a doc.
      if (!doc.response)
        throw new Error(`OpenAPI: ${method} ${route.pattern} has no response schema`);
      return { description, content: { "application/json": { schema: doc.response } } };
  }
}

/** The header of every management write (gateway/idempotency.ts). */
const IDEMPOTENCY_KEY_PARAMETER: JsonSchema = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: `A key of your choosing (a UUID) for this request: a retry with the same key, method, path and body within ${IDEMPOTENCY_TTL_SECONDS / 3600} h gets the first answer again (header Idempotent-Replayed: true) and changes nothing; the same key on another request is a 422, and while the first is still running a 409.`,
  schema: {
    type: "string",
    minLength: 1,
    maxLength: IDEMPOTENCY_KEY_MAX_CHARS,
    pattern: "^[\\x20-\\x7E]+$",
  },
};

function operation(route: Route, method: string, doc: OperationDoc, params: string[]): JsonSchema {
  const parameters = [
    ...params.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })),
    ...(doc.query ?? []).map((name) => ({
      name,
      in: "query",
      schema: doc.queryRules?.[name] ?? PAGE_QUERY_RULES[name] ?? { type: "string" },
    })),
    ...(takesIdempotencyKey(route, method) ? [IDEMPOTENCY_KEY_PARAMETER] : []),
  ];
  const responses: Record<string, JsonSchema> = {
    [String(doc.status)]: successResponse(route, method, doc),
    "400": errorResponse("Bad input: the message names the field or parameter and the rule"),
  };
  if (route.access !== "public") {
    responses["401"] = errorResponse("No key, or not a valid one");
    responses["403"] = errorResponse("The key may not do this");
  }
  if (doc.produces === "audio") {
    responses["429"] = {
      ...errorResponse("Rate limit exceeded"),
      headers: { "Retry-After": { schema: { type: "integer" } }, ...RATE_LIMIT_HEADERS },
    };
  }
  // Every other failure (404, 409, 413, 429, 5xx) has the same envelope.
  responses.default = errorResponse(
    "Any other error, in the same envelope: 404 not found, 409 conflict or a count limit, 413 too large, 429 rate or budget limit, 5xx",
  );
  const op: JsonSchema = {
    operationId: `${method.toLowerCase()}${openApiPath(route.pattern)
      .path.split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((w) => w[0]?.toUpperCase() + w.slice(1))
      .join("")}`,
    summary: doc.summary,
    description: ACCESS_NOTE[route.access],
    tags: [tagOf(openApiPath(route.pattern).path)],
    parameters,
    responses,
  };
  if (route.access === "public") op.security = [];
  if (doc.body) {
    op.requestBody = { required: true, content: { "application/json": { schema: doc.body } } };
  }
  return op;
}

/**
 * The OpenAPI 3.1 document of `routes`: every route, every method, each from the doc the
 * route carries next to its handler. A method without a doc (or a doc without a method)
 * throws, so a route added without its description fails the tests, not a reader.
 */
export function buildOpenApi(
  routes: readonly Route[],
  options: { speechDefaultFormat?: AudioFormatName } = {},
): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const { path, params } = openApiPath(route.pattern);
    const item: Record<string, JsonSchema> = {};
    for (const method of Object.keys(route.docs ?? {})) {
      if (!route.methods[method])
        throw new Error(`OpenAPI: ${route.pattern} documents ${method}, which it does not serve`);
    }
    for (const method of Object.keys(route.methods)) {
      const doc = route.docs?.[method];
      if (!doc) throw new Error(`OpenAPI: ${method} ${route.pattern} has no doc`);
      if (isApiRoute(route)) item[method.toLowerCase()] = operation(route, method, doc, params);
    }
    if (isApiRoute(route)) paths[path] = item;
  }
  // The default a speech request gets is the deployment's: the document states that one.
  const speech = paths["/api/v1/audio/speech"]?.post;
  if (speech?.requestBody && options.speechDefaultFormat) {
    speech.requestBody = {
      required: true,
      content: {
        "application/json": { schema: speechBodySchema(options.speechDefaultFormat) },
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Railgate API",
      version: packageVersion(),
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
      description: `Speech gateway with guardrails. Browsers: CORS per RAILGATE_CORS_ORIGINS (request headers allowed: ${CORS_ALLOWED_HEADERS}). ${COUNT_LIMITS_NOTE}`,
    },
    servers: [{ url: "/" }],
    tags: TAGS.map(({ name, description }) => ({ name, description })),
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { Error: ERROR_SCHEMA },
    },
    paths,
  };
}
