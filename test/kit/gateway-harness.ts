import { request as httpRequest } from "node:http";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import type { RegionName } from "../../domain/enums.js";
import type { RailgateConfig } from "../../platform/config/config.js";
import { createTestDatabase, type TestDatabase } from "./databases.js";
import { expectStatus } from "./expect.js";
import { Api } from "./http.js";
import { type LaneStore, startLaneStore } from "./lane.js";
import { MANAGEMENT_KEY, startTestSystem } from "./system.js";

/** What a gateway suite talks to: its store (see lane.ts), the whole system, and clients for it. */
export interface Harness {
  redis: LaneStore;
  system: RunningSystem;
  /** The management key on the global listener. */
  api: Api;
  /** No key at all. */
  anon: Api;
  baseUrl(region?: RegionName): string;
}

/**
 * Registers before/after hooks in the calling describe(): the lane's store (a private
 * redis-server on a free port, never the machine's 6379, or the embedded store) and the system
 * on free ports against it, both stopped afterwards.
 */
export function useSystem(
  overrides: Partial<RailgateConfig> = {},
  options: {
    /**
     * A request-log database of its own instead of the run's shared one: every system's webhook
     * worker claims due deliveries from its database, so on the shared one a system with the
     * default 10 s backoff could take (and reschedule) a delivery a suite with short retries waits on.
     */
    ownDatabase?: boolean;
  } = {},
): Harness {
  const h = {} as Harness;
  let database: TestDatabase | undefined;
  before(async () => {
    h.redis = await startLaneStore();
    if (options.ownDatabase) database = await createTestDatabase("embedded");
    h.system = await startTestSystem(h.redis.url, overrides, { database: database?.db });
    h.baseUrl = (region = "global") => `http://127.0.0.1:${h.system.gatewayPorts[region]}`;
    h.api = new Api(h.baseUrl(), MANAGEMENT_KEY);
    h.anon = new Api(h.baseUrl());
  });
  after(async () => {
    await h.system?.close();
    await database?.dispose();
    await h.redis?.stop();
  });
  return h;
}

/** Every key a guardrail response carries, and nothing else. */
export const GUARDRAIL_KEYS = [
  "id",
  "name",
  "description",
  "workspace_id",
  "allowed_data_regions",
  "allowed_models",
  "allowed_providers",
  "ignored_models",
  "ignored_providers",
  "content_filter_builtins",
  "content_filters",
  "enable_free_model_publication",
  "enable_free_model_training",
  "enable_paid_model_training",
  "enforce_zdr",
  "enforce_zdr_anthropic",
  "enforce_zdr_openai",
  "enforce_zdr_google",
  "enforce_zdr_xai",
  "enforce_zdr_other",
  "allow_safety_retention_google",
  "allow_safety_retention_other",
  "include_byok_in_budgets",
  "limit_usd",
  "reset_interval",
  "forbid_audio_cache",
  "checks",
  "last_check_run",
  "shadow",
  "is_workspace_default",
  "created_at",
  "updated_at",
] as const;

export const ZDR_VENDOR_FIELDS = [
  "enforce_zdr_anthropic",
  "enforce_zdr_openai",
  "enforce_zdr_google",
  "enforce_zdr_xai",
  "enforce_zdr_other",
] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function nullOr(value: unknown, check: (v: unknown) => void): void {
  if (value !== null) check(value);
}

function nonEmptyArrayOf(kind: "string" | "object") {
  return (v: unknown) => {
    expect(v).to.be.an("array").that.is.not.empty;
    for (const item of v as unknown[]) expect(item).to.be.a(kind);
  };
}

/** A complete, well-typed guardrail as the API documents it. */
// biome-ignore lint/suspicious/noExplicitAny: a JSON body of any shape
export function expectGuardrail(g: any): void {
  expect(g, "guardrail").to.be.an("object");
  expect(Object.keys(g).sort()).to.deep.equal([...GUARDRAIL_KEYS].sort());
  expect(g.id).to.match(UUID);
  expect(g.workspace_id).to.match(UUID);
  expect(g.name).to.be.a("string").that.is.not.empty;
  expect(g.description).to.be.a("string");
  for (const f of [
    "allowed_data_regions",
    "allowed_models",
    "allowed_providers",
    "ignored_models",
    "ignored_providers",
  ]) {
    nullOr(g[f], nonEmptyArrayOf("string"));
  }
  nullOr(g.content_filter_builtins, nonEmptyArrayOf("object"));
  nullOr(g.content_filters, nonEmptyArrayOf("object"));
  for (const f of [
    "enable_free_model_publication",
    "enable_free_model_training",
    "enable_paid_model_training",
    "include_byok_in_budgets",
    "forbid_audio_cache",
    "is_workspace_default",
    ...ZDR_VENDOR_FIELDS,
  ]) {
    expect(g[f], f).to.be.a("boolean");
  }
  expect(g.enforce_zdr).to.equal(null);
  nullOr(g.allow_safety_retention_google, (v) => expect(v).to.be.a("boolean"));
  nullOr(g.allow_safety_retention_other, (v) => expect(v).to.be.a("boolean"));
  // limit_usd and reset_interval are both set or both null.
  expect(g.limit_usd === null).to.equal(g.reset_interval === null);
  nullOr(g.limit_usd, (v) => expect(v).to.be.a("number"));
  nullOr(g.reset_interval, (v) => expect(v).to.be.oneOf(["daily", "weekly", "monthly"]));
  expect(g.created_at).to.match(ISO_UTC);
  nullOr(g.updated_at, (v) => expect(v).to.match(ISO_UTC));
}

let counter = 0;
/** A name no other test in the run uses. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix} ${process.pid}-${counter}`;
}

/** Creates a guardrail (201) and returns its JSON. */
// biome-ignore lint/suspicious/noExplicitAny: a JSON body of any shape
export async function createGuardrail(api: Api, body: Record<string, unknown> = {}): Promise<any> {
  const res = await api.post("/api/v1/guardrails", { name: uniqueName("guardrail"), ...body });
  expectStatus(res, 201);
  return res.body.data;
}

/** Creates a key (201) and returns its public record and its secret. */
export async function createKey(
  api: Api,
  body: Record<string, unknown> = {},
  // biome-ignore lint/suspicious/noExplicitAny: a JSON body of any shape
): Promise<{ data: any; secret: string }> {
  const res = await api.post("/api/v1/keys", { name: uniqueName("key"), ...body });
  expectStatus(res, 201);
  return { data: res.body.data, secret: res.body.key };
}

/** Creates a workspace (201) and returns its JSON. */
// biome-ignore lint/suspicious/noExplicitAny: a JSON body of any shape
export async function createWorkspace(api: Api, body: Record<string, unknown> = {}): Promise<any> {
  const res = await api.post("/api/v1/workspaces", { name: uniqueName("Workspace"), ...body });
  expectStatus(res, 201);
  return res.body.data;
}

/**
 * A request over plain node:http, for what fetch will not send: a body
 * without Content-Type, or one in chunks without Content-Length
 * (Transfer-Encoding: chunked), which only the gateway's streaming byte count
 * can stop.
 */
export function sendRaw(
  url: string,
  init: { method: string; headers: Record<string, string>; chunks: string[] },
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method, headers: init.headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        text += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    // The gateway may answer and stop reading before every chunk is out.
    req.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE" && err.code !== "ECONNRESET") reject(err);
    });
    for (const c of init.chunks) req.write(c);
    req.end();
  });
}
