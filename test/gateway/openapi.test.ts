import { expect } from "chai";
import type { Route } from "../../gateway/context.js";
import { DOCS_SCRIPT_PATH, SCALAR_BUNDLE_PATH } from "../../gateway/openapi/docs-page.js";
import { buildOpenApi, isApiRoute, openApiPath } from "../../gateway/openapi/document.js";
import { routes } from "../../gateway/routes.js";
import { createKey, useSystem } from "../kit/gateway-harness.js";
import { readRepoFile } from "../kit/start-commands.js";

// biome-ignore lint/suspicious/noExplicitAny: the document is arbitrary JSON
type Doc = any;

/** A concrete request path for a documented one: every {param} becomes "x". */
function concrete(path: string): string {
  return path.replace(/\{[^}]+\}/g, "x");
}

/** A value of another JSON type than the schema's, so the validator must name the field. */
function wrongValue(schema: Doc): unknown {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  return type === "string" || schema.oneOf ? true : "not-the-right-type";
}

describe("gateway: OpenAPI document and /docs", () => {
  const h = useSystem();
  let doc: Doc;
  let standardKey: string;

  before(async () => {
    const res = await h.anon.get("/api/v1/openapi.json");
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.match(/^application\/json/);
    doc = res.body;
    standardKey = (await createKey(h.api)).secret;
  });

  /** Each documented operation: its path, method and the document's description of it. */
  function operations(): { path: string; method: string; op: Doc }[] {
    return Object.entries(doc.paths as Record<string, Record<string, Doc>>).flatMap(
      ([path, item]) =>
        Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
    );
  }

  /** The key a documented operation needs (none for public ones). */
  function apiFor(op: Doc) {
    if (op.security?.length === 0) return h.anon;
    return /standard|Any valid key/.test(op.description) ? h.api.withKey(standardKey) : h.api;
  }

  it("is OpenAPI 3.1, public, with bearer security and the error shape", () => {
    expect(doc.openapi).to.equal("3.1.0");
    expect(doc.components.securitySchemes.bearer).to.deep.equal({ type: "http", scheme: "bearer" });
    expect(doc.components.schemas.Error.properties.error.required).to.deep.equal([
      "code",
      "message",
    ]);
  });

  it("documents every API route of the router with exactly its methods, and nothing else", () => {
    const fromRoutes = Object.fromEntries(
      routes
        .filter(isApiRoute)
        .map((r) => [openApiPath(r.pattern).path, Object.keys(r.methods).sort()]),
    );
    const fromDoc = Object.fromEntries(
      Object.entries(doc.paths as Record<string, object>).map(([p, item]) => [
        p,
        Object.keys(item)
          .map((m) => m.toUpperCase())
          .sort(),
      ]),
    );
    expect(fromDoc).to.deep.equal(fromRoutes);
    expect(Object.keys(fromDoc)).to.include.members([
      "/api/v1/audio/speech",
      "/api/v1/openapi.json",
      "/healthz",
    ]);
  });

  it("describes the API only: the console's and /docs' pages and files are no operations", () => {
    const paths = Object.keys(doc.paths);
    expect(paths.filter((p) => p === "/docs" || p.startsWith("/docs/"))).to.deep.equal([]);
    expect(paths.filter((p) => p === "/console" || p.startsWith("/console/"))).to.deep.equal([]);
    // The router still serves them.
    expect(routes.some((r) => r.pattern === "/console/console.js")).to.equal(true);
  });

  it("tags every operation with its resource, each tag declared once, for /docs to group", () => {
    const declared = (doc.tags as { name: string; description: string }[]).map((t) => t.name);
    expect(new Set(declared).size).to.equal(declared.length);
    const used = new Set<string>();
    for (const { path, method, op } of operations()) {
      expect(op.tags, `${method} ${path}`).to.have.length(1);
      expect(declared, `${method} ${path}`).to.include(op.tags[0]);
      used.add(op.tags[0]);
    }
    expect([...used].sort()).to.deep.equal([...declared].sort());
    expect(doc.paths["/api/v1/keys/{hash}"].patch.tags).to.deep.equal(["API keys"]);
    expect(doc.paths["/api/v1/workspaces/{id}/credits"].post.tags).to.deep.equal(["Credits"]);
    expect(doc.paths["/api/v1/audio/speech"].post.tags).to.deep.equal(["Speech"]);
  });

  it("marks speech's required fields (voice too) and states response_format's default", () => {
    const body =
      doc.paths["/api/v1/audio/speech"].post.requestBody.content["application/json"].schema;
    expect(body.required).to.include.members(["model", "input", "voice"]);
    expect(body.properties.response_format.default).to.equal("pcm");
    expect(body.properties.response_format.enum).to.include("pcm");
  });

  it("is the package's version, under the Apache-2.0 licence", () => {
    expect(doc.info.version).to.equal(JSON.parse(readRepoFile("package.json")).version);
    expect(doc.info.license).to.deep.equal({ name: "Apache-2.0", identifier: "Apache-2.0" });
  });

  it("every documented operation exists on the live gateway (never 'No route' nor 405)", async () => {
    for (const { path, method } of operations()) {
      const res = await h.anon.request(method, concrete(path));
      const where = `${method} ${path}`;
      expect(res.status, where).to.not.equal(405);
      expect(String(res.body?.error?.message ?? ""), where).to.not.match(/^No route for/);
    }
  });

  it("documents the path parameters of each route and marks public routes as needing no key", () => {
    const op = doc.paths["/api/v1/guardrails/{id}/assignments/keys"].post;
    expect(op.parameters.filter((p: { in: string }) => p.in === "path")).to.deep.equal([
      { name: "id", in: "path", required: true, schema: { type: "string" } },
    ]);
    expect(op.security).to.equal(undefined);
    expect(doc.paths["/api/v1/models"].get.security).to.deep.equal([]);
    expect(doc.paths["/api/v1/audio/speech"].post.responses["429"].headers).to.have.keys(
      "Retry-After",
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
    );
  });

  it("every documented body field is one the handler knows, and an undocumented one is refused", async () => {
    const withBodies = operations().filter((o) => o.op.requestBody);
    expect(withBodies.length).to.be.greaterThan(10);
    for (const { path, method, op } of withBodies) {
      const schema = op.requestBody.content["application/json"].schema;
      const api = apiFor(op);
      const where = `${method} ${path}`;
      expect(schema.additionalProperties, where).to.equal(false);
      const unknown = await api.request(method, concrete(path), { zz_undocumented: 1 });
      expect(unknown.status, where).to.equal(400);
      expect(unknown.body.error.message, where).to.equal('Unknown field "zz_undocumented"');
      for (const [field, fieldSchema] of Object.entries(schema.properties as Record<string, Doc>)) {
        const res = await api.request(method, concrete(path), { [field]: wrongValue(fieldSchema) });
        const at = `${where} ${field}`;
        expect(res.status, at).to.equal(400);
        expect(res.body.error.message, at).to.not.match(/^Unknown field/);
        expect(res.body.error.message, at).to.include(field);
      }
    }
  });

  it("every documented query parameter is accepted by name, and an undocumented one is refused", async () => {
    const withQuery = operations().filter((o) =>
      o.op.parameters.some((p: Doc) => p.in === "query"),
    );
    expect(withQuery.length).to.be.greaterThan(5);
    for (const { path, method, op } of withQuery) {
      const api = apiFor(op);
      const where = `${method} ${path}`;
      const unknown = await api.request(method, `${concrete(path)}?zz_undocumented=1`);
      expect(unknown.status, where).to.equal(400);
      expect(unknown.body.error.message, where).to.equal(
        'Unknown query parameter "zz_undocumented"',
      );
      for (const p of op.parameters.filter((x: Doc) => x.in === "query")) {
        const res = await api.request(method, `${concrete(path)}?${p.name}=1`);
        expect(String(res.body?.error?.message ?? ""), `${where} ?${p.name}`).to.not.match(
          /^Unknown query parameter/,
        );
      }
    }
  });

  it("serves /docs as an HTML page that loads the reference from the document", async () => {
    const res = await fetch(`${h.baseUrl()}/docs`);
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.equal("text/html; charset=utf-8");
    const html = await res.text();
    expect(html).to.match(/^<!doctype html>/);
    // Scalar's bundle from the pinned package, served here (test/console/docs-page.test.ts
    // renders it in Chromium); the document's URL is in the page's own script.
    expect(html).to.include(`<script src="${SCALAR_BUNDLE_PATH}"></script>`);
    expect(html).to.not.include("https://");
    const script = await (await fetch(`${h.baseUrl()}${DOCS_SCRIPT_PATH}`)).text();
    expect(script).to.include('"url": "/api/v1/openapi.json"');
  });

  describe("buildOpenApi", () => {
    const handler = async () => {};
    it("refuses a route method without its doc, naming it (a new route cannot go undocumented)", () => {
      const route: Route = {
        pattern: "/api/v1/new/:id",
        access: "public",
        methods: { GET: handler },
      };
      expect(() => buildOpenApi([route])).to.throw("OpenAPI: GET /api/v1/new/:id has no doc");
    });
    it("refuses a doc for a method the route does not serve", () => {
      const route: Route = {
        pattern: "/api/v1/new",
        access: "public",
        methods: { GET: handler },
        docs: { GET: { summary: "s", status: 200 }, PUT: { summary: "s", status: 200 } },
      };
      expect(() => buildOpenApi([route])).to.throw("documents PUT, which it does not serve");
    });
    it("refuses a JSON operation without its response schema, naming it", () => {
      const route: Route = {
        pattern: "/api/v1/new",
        access: "public",
        methods: { GET: handler },
        docs: { GET: { summary: "s", status: 200 } },
      };
      expect(() => buildOpenApi([route])).to.throw(
        "OpenAPI: GET /api/v1/new has no response schema",
      );
    });
  });
});
