// Guardrail policies of a chosen workspace, one type at a time: list (with key and member counts
// and the guardrail a policy was mapped from), create, edit (policy-form.js), delete, each one's
// history, checks, what-if and shadow (policy-changes.js); the workspace-wide (account) policies
// of the type, with the same panels; and what governs a key or member (policy-assignments.js).

import { call } from "../lib/api.js";
import { $, button, options, show, status } from "../lib/dom.js";
import { money } from "../lib/format.js";
import { allKeys, guardrailName, knowsGuardrails, loadAllGuardrails } from "../lib/names.js";
import { dataTable } from "../lib/table.js";
import { resetAssignments, setupAssignments } from "./policy-assignments.js";
import {
  hidePolicyChanges,
  policyDeleted,
  policySaved,
  setupPolicyChanges,
  showPolicyHistory,
  showPolicyWhatIf,
} from "./policy-changes.js";
import {
  base,
  confirmMove,
  coverage,
  policyPath,
  setPolicies,
  type,
  workspace,
} from "./policy-common.js";
import { editingPolicy, fillForm, setupPolicyForm } from "./policy-form.js";

/** The policies on show (one workspace's, one type's). */
let policies = [];

/** A config in a line: what an operator compares across rows. */
function configText(t, c) {
  if (t === "budget")
    return `${money(c.limit_usd)} ${c.reset_interval}${c.include_byok_in_budgets ? ", BYOK counted" : ""}`;
  const parts = Object.entries(c ?? {})
    .filter(([, v]) => v !== null && v !== false && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) =>
      Array.isArray(v)
        ? `${k}: ${v.map((x) => (typeof x === "object" ? (x.slug ?? x.pattern) : x)).join(", ")}`
        : v === true
          ? k
          : `${k}: ${v}`,
    );
  return parts.join("; ") || "no restriction";
}

/** "mapped from guardrail X", "replaces guardrail Y": where a policy came from. */
function origin(p) {
  const from = (p.legacy_guardrail_ids ?? []).map(guardrailName);
  const replaced = (p.replaced_legacy_guardrail_ids ?? []).map(guardrailName);
  const words = [];
  if (p.is_legacy_mapped && from.length > 0) words.push(`mapped from guardrail ${from.join(", ")}`);
  if (replaced.length > 0) words.push(`replaces guardrail ${replaced.join(", ")}`);
  return words.join("; ") || "—";
}

const table = dataTable({
  caption: "Policies",
  id: "policies-table",
  one: "policy",
  columns: [
    { key: "name", label: "Name", text: (p) => p.name },
    { key: "config", label: "Settings", text: (p) => configText(p.policy_type, p.config) },
    {
      key: "keys",
      label: "Keys",
      text: (p) => String(p.api_key_count),
      sort: (p) => p.api_key_count,
      numeric: true,
    },
    {
      key: "members",
      label: "Members",
      text: (p) => String(p.member_count),
      sort: (p) => p.member_count,
      numeric: true,
    },
    {
      key: "default",
      label: "Workspace default",
      text: (p) => (p.is_workspace_default ? "yes" : "no"),
    },
    { key: "origin", label: "Origin", text: origin },
    { key: "id", label: "ID", text: (p) => p.id, className: "mono clip", secondary: true },
  ],
  actions: (p) => [
    button("Edit", `Edit policy ${p.name}`, () => edit(p)),
    button("History", `History of policy ${p.name}`, () => showPolicyHistory(p)),
    button("What-if", `What-if on policy ${p.name}`, () => showPolicyWhatIf(p)),
    button("Delete", `Delete policy ${p.name}`, () => remove(p), "danger"),
  ],
});

const accountTable = dataTable({
  caption: "Workspace-wide policies",
  id: "account-policies-table",
  one: "workspace-wide policy",
  columns: [
    { key: "name", label: "Name", text: (p) => p.name },
    { key: "config", label: "Settings", text: (p) => configText(p.policy_type, p.config) },
    { key: "covers", label: "Covers", text: coverage },
  ],
  actions: (p) => [
    button("History", `History of workspace-wide policy ${p.name}`, () => showPolicyHistory(p)),
    button("What-if", `What-if on workspace-wide policy ${p.name}`, () => showPolicyWhatIf(p)),
  ],
});

export async function refreshPolicies() {
  if (!$("policies-list").contains(table.element)) show("policies-list", table.element);
  if (!$("account-policies-list").contains(accountTable.element))
    show("account-policies-list", accountTable.element);
  const t = type();
  const [mine, account] = await Promise.all([
    call("GET", `${base(t)}?workspace_id=${encodeURIComponent(workspace())}`),
    call("GET", `/guardrails/policies/account?policy_type=${t}`),
  ]);
  policies = mine.data;
  setPolicies(policies);
  // A policy mapped from a guardrail made since the names were read names it too.
  const origins = policies.flatMap((p) => [
    ...(p.legacy_guardrail_ids ?? []),
    ...(p.replaced_legacy_guardrail_ids ?? []),
  ]);
  if (!knowsGuardrails(origins)) await loadAllGuardrails();
  table.setRows(policies);
  accountTable.setRows(account.data);
  options(
    $("pol-assign-policy"),
    policies,
    (p) => p.id,
    (p) => p.name,
  );
  fillSubjects();
}

/** Keys of the chosen workspace by name; members as the owners of its keys. */
export function fillSubjects() {
  const keys = allKeys().filter((k) => k.kind === "standard" && k.workspace_id === workspace());
  options(
    $("pol-key"),
    keys,
    (k) => k.hash,
    (k) => `${k.name} (${k.label})`,
  );
  const members = [...new Set(keys.map((k) => k.member_user_id).filter(Boolean))];
  options(
    $("pol-members"),
    members,
    (m) => m,
    (m) => m,
  );
}

async function edit(p) {
  // Until the policy is read the form is not its edit form: typing into what a late answer would
  // overwrite is lost work, so the heading (what tells an operator, or a test, it is ready) waits.
  $("policy-form-h").textContent = `Loading policy ${p.name}…`;
  try {
    const res = await call("GET", policyPath(p));
    fillForm(res.data);
    $("pol-name").focus();
  } catch (err) {
    status(`Policy ${p.name}: ${err.message}`);
  }
}

async function remove(p) {
  if (!window.confirm(`Delete policy ${p.name} (${p.id})? Its assignments go with it.`)) return;
  if (!confirmMove(p.policy_type)) return;
  try {
    await call("DELETE", policyPath(p));
    status(`Policy ${p.name} deleted.`);
    if (editingPolicy()?.id === p.id) fillForm(undefined);
    policyDeleted(p);
    await refreshPolicies();
  } catch (err) {
    status(`Delete ${p.name}: ${err.message}`);
  }
}

export function setupPolicies() {
  const refresh = () => refreshPolicies().catch((err) => status(`Policies: ${err.message}`));
  setupPolicyForm(async (p) => {
    await refreshPolicies();
    await policySaved(p);
  });
  setupPolicyChanges(refresh);
  setupAssignments(refreshPolicies);
  for (const id of ["pol-type", "pol-workspace"]) {
    $(id).addEventListener("change", () => {
      fillForm(undefined);
      hidePolicyChanges();
      refresh();
    });
  }
}

export function resetPolicies() {
  policies = [];
  setPolicies([]);
  table.setRows([]);
  accountTable.setRows([]);
  resetAssignments();
  hidePolicyChanges();
  fillForm(undefined);
}
