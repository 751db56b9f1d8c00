// What the Policies view's parts share: the type and workspace chosen, the policies on show, and
// the confirmation the first policy write of a type asks for.

import { $ } from "../lib/dom.js";

export const TYPE_WORDS = {
  budget: "Budget",
  model_availability: "Model availability",
  moderation: "Moderation",
};
export const TYPES = Object.keys(TYPE_WORDS);

export const type = () => $("pol-type").value;
export const workspace = () => $("pol-workspace").value;
export const base = (t = type()) => `/guardrails/policies/${t}`;
/** One policy's path: its type and id name it. */
export const policyPath = (p) => `${base(p.policy_type)}/${encodeURIComponent(p.id)}`;
/** A workspace-wide (account) policy's path: one for every type. */
export const accountPolicyPath = (p) => `${base("account")}/${encodeURIComponent(p.id)}`;
/** A workspace-wide policy answers `is_default` where a workspace's answers `is_workspace_default`. */
export const isAccountPolicy = (p) => "is_default" in p;
/** The path of either kind: their history, checks, what-if and shadow routes are the same below it. */
export const changesPath = (p) => (isAccountPolicy(p) ? accountPolicyPath(p) : policyPath(p));

/** "every workspace but 2", "3 workspaces": which workspaces a workspace-wide policy covers. */
export function coverage(p) {
  if (!p.is_default) return `${p.workspace_count} workspace${p.workspace_count === 1 ? "" : "s"}`;
  const out = p.opted_out_workspace_ids.length;
  return `every workspace${out ? ` but ${out}` : ""}`;
}

/** The policies on show (one workspace's, one type's). */
let shown = [];

export function setPolicies(list) {
  shown = list;
}

export function policyName(id) {
  return shown.find((p) => p.id === id)?.name ?? `policy ${id.slice(0, 8)}…`;
}

/**
 * The first write of a type through policies moves the type off the workspace's guardrails for
 * good (docs/guardrail-policies.md): while mapped policies are listed, the operator confirms it.
 */
export function confirmMove(t) {
  const mapped = shown.filter((p) => p.is_legacy_mapped);
  if (mapped.length === 0) return true;
  return window.confirm(
    `This is the first ${TYPE_WORDS[t].toLowerCase()} policy change in this workspace: from now on ` +
      `its guardrails no longer govern ${TYPE_WORDS[t].toLowerCase()}, and their parts of it ` +
      `(${mapped.map((p) => p.name).join(", ")}) become policies managed here. Continue?`,
  );
}
