import { MANAGEMENT_KEY } from "./constants.js";

/**
 * The few management calls the scenarios need, made through the gateway's
 * public HTTP API with the management key, exactly as an operator would.
 */
export class ManagementApi {
  constructor(private readonly baseUrl: string) {}

  async call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<T> {
    const res = await fetch(`${this.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${MANAGEMENT_KEY}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} -> ${res.status}: ${text.slice(0, 500)}`);
    return JSON.parse(text) as T;
  }

  /** A standard key in the default workspace: its secret and hash. */
  async createKey(name: string): Promise<{ secret: string; hash: string }> {
    const res = await this.call<{ key: string; data: { hash: string } }>("POST", "/keys", { name });
    return { secret: res.key, hash: res.data.hash };
  }

  async createGuardrail(body: Record<string, unknown>): Promise<string> {
    const res = await this.call<{ data: { id: string } }>("POST", "/guardrails", body);
    return res.data.id;
  }

  async assignKeys(guardrailId: string, keyHashes: string[]): Promise<void> {
    await this.call("POST", `/guardrails/${guardrailId}/assignments/keys`, {
      key_hashes: keyHashes,
    });
  }

  /** The default workspace's default guardrail id (materialized by a PATCH on it). */
  async defaultGuardrailId(): Promise<string> {
    const res = await this.call<{ data: { default_guardrail_id: string }[] }>("GET", "/workspaces");
    const id = res.data[0]?.default_guardrail_id;
    if (!id) throw new Error("GET /workspaces returned no default_guardrail_id");
    return id;
  }
}
