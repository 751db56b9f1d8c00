import type { RequestContext, Route } from "../context.js";
import { sendJson } from "../http-io.js";
import {
  DOCS_HEADERS,
  DOCS_SCRIPT_PATH,
  docsPage,
  docsScript,
  SCALAR_BUNDLE_PATH,
} from "../openapi/docs-page.js";
import { buildOpenApi } from "../openapi/document.js";
import { SCALAR_BUNDLE } from "../openapi/scalar-bundle.js";
import type { JsonSchema } from "../openapi/spec-schema.js";
import { STATIC_PAGE } from "../route-access.js";

export const OPENAPI_PATH = "/api/v1/openapi.json";

/** The outline of an OpenAPI 3.1 document (its full schema is the OpenAPI specification's). */
const OPENAPI_DOCUMENT_SCHEMA: JsonSchema = {
  type: "object",
  required: ["openapi", "info", "paths"],
  properties: {
    openapi: { type: "string", pattern: "^3\\.1\\.\\d+$" },
    info: { type: "object", required: ["title", "version"] },
    paths: { type: "object" },
    components: { type: "object" },
  },
};

const PAGE = Buffer.from(docsPage(OPENAPI_PATH));
const SCRIPT = Buffer.from(docsScript(OPENAPI_PATH));

function send(ctx: RequestContext, type: string, body: Buffer, cacheControl: string): void {
  ctx.res.writeHead(200, {
    "content-type": type,
    "content-length": body.length,
    "cache-control": cacheControl,
    ...DOCS_HEADERS,
  });
  ctx.res.end(body);
}

/**
 * The API's own description. `all` is read on first use: the route table includes these
 * routes, so it cannot be handed over while it is being built.
 */
export function docRoutes(all: () => readonly Route[]): Route[] {
  // One per default speech format: processes (tests) run gateways configured differently.
  const documents = new Map<string, JsonSchema>();
  return [
    {
      pattern: OPENAPI_PATH,
      access: STATIC_PAGE,
      methods: {
        async GET(ctx) {
          const format = ctx.speechDefaultFormat;
          let document = documents.get(format);
          if (!document) {
            document = buildOpenApi(all(), { speechDefaultFormat: format });
            documents.set(format, document);
          }
          sendJson(ctx.res, 200, document);
        },
      },
      docs: {
        GET: {
          summary: "This OpenAPI 3.1 document",
          status: 200,
          response: OPENAPI_DOCUMENT_SCHEMA,
        },
      },
    },
    {
      pattern: "/docs",
      access: STATIC_PAGE,
      methods: {
        async GET(ctx) {
          // A new build may change the page; it holds nothing secret.
          send(ctx, "text/html; charset=utf-8", PAGE, "no-cache");
        },
      },
      docs: {
        GET: {
          summary: "API reference page (Scalar, served locally)",
          status: 200,
          produces: "html",
        },
      },
    },
    {
      pattern: DOCS_SCRIPT_PATH,
      access: STATIC_PAGE,
      methods: {
        async GET(ctx) {
          send(ctx, "text/javascript; charset=utf-8", SCRIPT, "no-cache");
        },
      },
      docs: {
        GET: {
          summary: "The reference page's script (Scalar's configuration)",
          status: 200,
          produces: "asset",
        },
      },
    },
    {
      pattern: SCALAR_BUNDLE_PATH,
      access: STATIC_PAGE,
      methods: {
        async GET(ctx) {
          // The URL names the version: what it serves never changes.
          send(
            ctx,
            "text/javascript; charset=utf-8",
            SCALAR_BUNDLE,
            "public, max-age=31536000, immutable",
          );
        },
      },
      docs: {
        GET: {
          summary: "Scalar's API reference bundle (from the pinned npm package)",
          status: 200,
          produces: "asset",
        },
      },
    },
  ];
}
