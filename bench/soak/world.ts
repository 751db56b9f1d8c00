import { MANAGEMENT_KEY } from "../../test/kit/system.js";
import { newRequestId, send } from "./http.js";

/** A key the speech clients use. */
export interface SoakKey {
  label: string;
  secret: string;
  hash: string;
  workspaceId: string;
}

export interface SoakWorld {
  keys: SoakKey[];
  /** Every workspace the soak made (writers add keys and guardrails to these). */
  workspaceIds: string[];
  /** Workspaces with credits: their credits used are checked. */
  meteredWorkspaceIds: string[];
  /** The workspace kept short of credits, which the writers top up. */
  starvedWorkspaceId: string;
}

/** A setup call: the system is up and no fault has started, so anything but 2xx is fatal. */
async function setup(baseUrl: string, method: string, path: string, body: unknown) {
  const a = await send(baseUrl, method, path, {
    token: MANAGEMENT_KEY,
    body,
    headers: { "x-request-id": newRequestId() },
  });
  if (a.status < 200 || a.status >= 300) {
    throw new Error(`setup ${method} ${path}: ${a.status} ${JSON.stringify(a.body)}`);
  }
  return (a.body as { data: Record<string, unknown>; key?: string }) ?? { data: {} };
}

/**
 * Four workspaces: one with plenty of credits, one whose keys have a small spend limit and a
 * small rate limit, one short of credits (402s until a writer tops it up), and one unmetered.
 * Some keys refuse often, so refusals are part of the steady load.
 */
export async function createWorld(baseUrl: string): Promise<SoakWorld> {
  const workspace = async (name: string, creditsUsd: number) => {
    const ws = await setup(baseUrl, "POST", "/api/v1/workspaces", { name });
    const id = ws.data.id as string;
    if (creditsUsd > 0) {
      await setup(baseUrl, "POST", `/api/v1/workspaces/${id}/credits`, { amount_usd: creditsUsd });
    }
    return id;
  };
  const suffix = Date.now().toString(36);
  const open = await workspace(`soak open ${suffix}`, 100);
  const limited = await workspace(`soak limited ${suffix}`, 100);
  const starved = await workspace(`soak starved ${suffix}`, 0.001);
  const unmetered = await workspace(`soak unmetered ${suffix}`, 0);
  const key = async (label: string, workspaceId: string, fields: Record<string, unknown> = {}) => {
    const created = await setup(baseUrl, "POST", "/api/v1/keys", {
      name: `soak ${label}`,
      workspace_id: workspaceId,
      ...fields,
    });
    return {
      label,
      secret: created.key as string,
      hash: created.data.hash as string,
      workspaceId,
    };
  };
  const keys = [
    await key("open-1", open),
    await key("open-2", open),
    // 40 requests of ~50 characters (1 µ$ a character), then 403 for the rest of the soak.
    await key("small-limit", limited, { limit: 0.002 }),
    await key("rate-limited", limited, { rate_limit_per_minute: 20 }),
    await key("starved", starved),
    await key("unmetered", unmetered),
  ];
  return {
    keys,
    workspaceIds: [open, limited, starved, unmetered],
    meteredWorkspaceIds: [open, limited, starved],
    starvedWorkspaceId: starved,
  };
}
