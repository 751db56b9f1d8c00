// Names for ids: keys by hash, guardrails and workspaces by id, read from their lists so that a
// table or a chart says "ci-bot", not 64 hex digits. Refreshed whenever a list is loaded.

import { fetchAll } from "./api.js";

const keys = new Map();
const guardrails = new Map();
const workspaces = new Map();

function fill(map, items, id) {
  map.clear();
  for (const item of items) map.set(id(item), item);
}

export async function loadKeys() {
  const all = await fetchAll("/keys", { include_disabled: true });
  fill(keys, all, (k) => k.hash);
  return all;
}

export async function loadWorkspaces() {
  const all = await fetchAll("/workspaces");
  fill(workspaces, all, (w) => w.id);
  return all;
}

/**
 * Guardrails live in workspaces: the list asks each one's, so a name shows wherever the id does.
 * Returns the guardrails of `workspaceId` ("" = the default workspace).
 */
export async function loadGuardrails(workspaceId) {
  const shown = await fetchAll("/guardrails", { workspace_id: workspaceId || undefined });
  for (const g of shown) guardrails.set(g.id, g);
  return shown;
}

export async function loadAllGuardrails() {
  const lists = await Promise.all(
    ["", ...workspaces.keys()].map((id) =>
      fetchAll("/guardrails", { workspace_id: id || undefined }),
    ),
  );
  guardrails.clear();
  for (const g of lists.flat()) guardrails.set(g.id, g);
  return [...guardrails.values()];
}

/** Whether every id is a guardrail the console knows by name. */
export function knowsGuardrails(ids) {
  return ids.every((id) => guardrails.has(id));
}

export function forgetGuardrail(id) {
  guardrails.delete(id);
}

export const allKeys = () => [...keys.values()];
export const allWorkspaces = () => [...workspaces.values()];
export const allGuardrails = () => [...guardrails.values()];

/** A short, still recognisable form of an id that has no name (deleted, or never had one). */
export function shortId(id) {
  return id && id.length > 12 ? `${id.slice(0, 8)}…` : (id ?? "");
}

export function keyName(hash) {
  if (!hash) return "—";
  return keys.get(hash)?.name ?? `key ${shortId(hash)}`;
}

export function guardrailName(id) {
  if (!id) return "—";
  const g = guardrails.get(id);
  if (g) return g.name;
  // A workspace's default guardrail is named after its workspace even before it is configured.
  for (const w of workspaces.values()) {
    if (w.default_guardrail_id === id) return `${w.name} default`;
  }
  return `guardrail ${shortId(id)}`;
}

export function workspaceName(id) {
  if (!id) return "Organization";
  return workspaces.get(id)?.name ?? `workspace ${shortId(id)}`;
}
