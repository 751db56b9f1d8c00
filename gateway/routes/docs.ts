import type { Route } from "../context.js";
import { sendJson } from "../http-io.js";
import { docsPage } from "../openapi/docs-page.js";
import { buildOpenApi } from "../openapi/document.js";
import type { JsonSchema } from "../openapi/spec-schema.js";

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

/**
 * The API's own description. `all` is read on first use: the route table includes these
 * routes, so it cannot be handed over while it is being built.
 */
export function docRoutes(all: () => readonly Route[]): Route[] {
  let document: JsonSchema | undefined;
  return [
    {
      pattern: OPENAPI_PATH,
      access: "public",
      methods: {
        async GET(ctx) {
          document ??= buildOpenApi(all());
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
      access: "public",
      methods: {
        async GET(ctx) {
          const html = docsPage(OPENAPI_PATH);
          ctx.res.writeHead(200, {
            "content-type": "text/html; charset=utf-8",
            "content-length": Buffer.byteLength(html),
          });
          ctx.res.end(html);
        },
      },
      docs: { GET: { summary: "API reference page (Scalar)", status: 200, produces: "html" } },
    },
  ];
}
