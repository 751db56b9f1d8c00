import { randomUUID } from "node:crypto";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import type { RegionName } from "../../domain/enums.js";
import { shown } from "./expect.js";
import { Api, postSpeech, type SpeechResponse } from "./http.js";
import { sleep } from "./poll.js";
import { MANAGEMENT_KEY } from "./system.js";

export interface Workspace {
  id: string;
  defaultGuardrailId: string;
}

export interface Key {
  secret: string;
  hash: string;
  workspaceId: string;
}

/** The management and speech API of one running system, over real HTTP. */
export class Gateway {
  /** The management key on the global listener. */
  readonly admin: Api;

  constructor(readonly system: Pick<RunningSystem, "gatewayPorts">) {
    this.admin = new Api(this.url("global"), MANAGEMENT_KEY);
  }

  url(region: RegionName = "global"): string {
    return `http://127.0.0.1:${this.system.gatewayPorts[region]}`;
  }

  /** A workspace of the test's own: its default guardrail, credits and keys touch nothing else. */
  async workspace(): Promise<Workspace> {
    const res = await this.admin.post("/api/v1/workspaces", {
      name: `enforcement ${randomUUID().slice(0, 8)}`,
    });
    expect(res.status, shown(res)).to.equal(201);
    return { id: res.body.data.id, defaultGuardrailId: res.body.data.default_guardrail_id };
  }

  async key(ws: Workspace | string, extra: Record<string, unknown> = {}): Promise<Key> {
    const workspaceId = typeof ws === "string" ? ws : ws.id;
    const res = await this.admin.post("/api/v1/keys", {
      name: `key ${randomUUID().slice(0, 8)}`,
      workspace_id: workspaceId,
      ...extra,
    });
    expect(res.status, shown(res)).to.equal(201);
    return { secret: res.body.key, hash: res.body.data.hash, workspaceId };
  }

  /** Creates a guardrail in the workspace; returns its id. */
  async guardrail(ws: Workspace, body: Record<string, unknown>): Promise<string> {
    const res = await this.admin.post("/api/v1/guardrails", {
      name: `guardrail ${randomUUID().slice(0, 8)}`,
      workspace_id: ws.id,
      ...body,
    });
    expect(res.status, shown(res)).to.equal(201);
    return res.body.data.id;
  }

  async patchGuardrail(id: string, body: Record<string, unknown>): Promise<void> {
    const res = await this.admin.patch(`/api/v1/guardrails/${id}`, body);
    expect(res.status, shown(res)).to.equal(200);
  }

  /** Configures the workspace default guardrail (materializing it the first time). */
  setDefault(ws: Workspace, body: Record<string, unknown>): Promise<void> {
    return this.patchGuardrail(ws.defaultGuardrailId, body);
  }

  async assignKeys(guardrailId: string, ...keys: Key[]): Promise<void> {
    const res = await this.admin.post(`/api/v1/guardrails/${guardrailId}/assignments/keys`, {
      key_hashes: keys.map((k) => k.hash),
    });
    expect(res.status, shown(res)).to.equal(200);
    expect(res.body.assigned_count).to.equal(keys.length);
  }

  async unassignKeys(guardrailId: string, ...keys: Key[]): Promise<void> {
    const res = await this.admin.post(`/api/v1/guardrails/${guardrailId}/assignments/keys/remove`, {
      key_hashes: keys.map((k) => k.hash),
    });
    expect(res.status, shown(res)).to.equal(200);
    expect(res.body.unassigned_count).to.equal(keys.length);
  }

  async assignMembers(guardrailId: string, ...userIds: string[]): Promise<void> {
    const res = await this.admin.post(`/api/v1/guardrails/${guardrailId}/assignments/members`, {
      member_user_ids: userIds,
    });
    expect(res.status, shown(res)).to.equal(200);
    expect(res.body.assigned_count).to.equal(userIds.length);
  }

  /** A key with a guardrail of its own in a fresh workspace: the most common set-up. */
  async governedKey(
    guardrail: Record<string, unknown>,
    keyExtra: Record<string, unknown> = {},
  ): Promise<{ ws: Workspace; key: Key; guardrailId: string }> {
    const ws = await this.workspace();
    const key = await this.key(ws, keyExtra);
    const guardrailId = await this.guardrail(ws, guardrail);
    await this.assignKeys(guardrailId, key);
    return { ws, key, guardrailId };
  }

  /** POST /api/v1/audio/speech through a regional listener. */
  speak(
    key: Key,
    body: Record<string, unknown>,
    region: RegionName = "global",
    headers: Record<string, string> = {},
  ): Promise<SpeechResponse> {
    return postSpeech(this.url(region), key.secret, { voice: "alloy", ...body }, { headers });
  }

  /** The generation record of a served request. */
  // biome-ignore lint/suspicious/noExplicitAny: generation JSON
  async generation(key: Key, res: SpeechResponse): Promise<any> {
    const id = res.headers.get("x-generation-id") ?? "";
    // The record is written once the stream ends, which may trail the last byte a little.
    for (let attempt = 0; attempt < 100; attempt++) {
      const got = await new Api(this.url(), key.secret).get(`/api/v1/generation?id=${id}`);
      if (got.status === 200 && got.body.data.status === "completed") return got.body.data;
      expect(got.status, shown(got)).to.be.oneOf([200, 404]);
      await sleep(20);
    }
    throw new Error(`generation ${id} was never recorded as completed`);
  }

  // biome-ignore lint/suspicious/noExplicitAny: explain JSON
  async explain(key: Key, query = ""): Promise<any> {
    const res = await this.admin.get(`/api/v1/keys/${key.hash}/explain${query}`);
    expect(res.status, shown(res)).to.equal(200);
    return res.body.data;
  }

  async credits(ws: Workspace): Promise<number | null> {
    const res = await this.admin.get(`/api/v1/workspaces/${ws.id}/credits`);
    expect(res.status, shown(res)).to.equal(200);
    return res.body.data.balance_usd;
  }

  async addCredits(ws: Workspace, amountUsd: number): Promise<void> {
    const res = await this.admin.post(`/api/v1/workspaces/${ws.id}/credits`, {
      amount_usd: amountUsd,
    });
    expect(res.status, shown(res)).to.equal(200);
  }
}

/** A 200 with audio, served by `provider` when given. */
export function expectAudio(res: SpeechResponse, provider?: string): void {
  expect(res.status, shown(res)).to.equal(200);
  expect(res.headers.get("x-generation-id")).to.match(/^gen-/);
  expect(res.bytes.byteLength).to.be.above(0);
  if (provider) expect(res.headers.get("x-railgate-provider")).to.equal(provider);
}

export const NO_ENDPOINTS =
  /^No endpoints available matching your guardrail restrictions and data policy$/;
