// Guardrail policies of a chosen workspace, one type at a time: list (with key and member counts
// and the guardrail a policy was mapped from), create, edit, delete; the workspace-wide (account)
// policies of the type; and what governs a key or member, with assignment changes that carry
// the state the operator saw, so that a change someone else made meanwhile is refused (409).

import { call } from "../lib/api.js";
import { $, button, options, show, status } from "../lib/dom.js";
import { list, money } from "../lib/format.js";
import {
  allKeys,
  guardrailName,
  keyName,
  knowsGuardrails,
  loadAllGuardrails,
} from "../lib/names.js";
import { dataTable } from "../lib/table.js";

const TYPE_WORDS = {
  budget: "Budget",
  model_availability: "Model availability",
  moderation: "Moderation",
};
const TYPES = Object.keys(TYPE_WORDS);
const LIST_FIELDS = [
  "allowed_models",
  "ignored_models",
  "allowed_providers",
  "ignored_providers",
  "allowed_data_regions",
];
/** The settings the form has a field for, per type; the rest of a config is edited as JSON. */
const TYPED = {
  budget: ["limit_usd", "reset_interval", "include_byok_in_budgets"],
  model_availability: [...LIST_FIELDS, "enforce_zdr", "require_eu_data_region"],
  moderation: ["content_filter_blocks_requests"],
};

/** The policies on show (one workspace's, one type's), and the one being edited. */
let policies = [];
let editing;
/** The assignment state the operator last saw, per workspace, subject and type: sent as expected. */
const seen = new Map();
const seenKey = (s, t) => `${workspace()}:${s.kind}:${s.id}:${t}`;

const type = () => $("pol-type").value;
const workspace = () => $("pol-workspace").value;
const base = (t = type()) => `/guardrails/policies/${t}`;

function policyName(id) {
  return policies.find((p) => p.id === id)?.name ?? `policy ${id.slice(0, 8)}…`;
}

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
    {
      key: "covers",
      label: "Covers",
      text: (p) =>
        p.is_default
          ? `every workspace${p.opted_out_workspace_ids.length ? ` but ${p.opted_out_workspace_ids.length}` : ""}`
          : `${p.workspace_count} workspace${p.workspace_count === 1 ? "" : "s"}`,
    },
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

function showTypedFields(t) {
  for (const fs of document.querySelectorAll("#policy-form [data-policy-type]"))
    fs.hidden = fs.dataset.policyType !== t;
}

function fillForm(p) {
  editing = p;
  const t = type();
  const c = p?.config ?? {};
  $("policy-form-h").textContent = p
    ? `Edit policy ${p.name}`
    : `Create a ${TYPE_WORDS[t].toLowerCase()} policy`;
  $("pol-submit").textContent = p ? "Save" : "Create";
  $("pol-name").value = p?.name ?? "";
  $("pol-default").checked = p?.is_workspace_default ?? false;
  $("pol-limit").value = c.limit_usd ?? "";
  $("pol-reset").value = c.reset_interval ?? "monthly";
  $("pol-byok").checked = c.include_byok_in_budgets ?? false;
  for (const f of LIST_FIELDS) $(`pol-${f}`).value = (c[f] ?? []).join(", ");
  $("pol-zdr").checked = c.enforce_zdr ?? false;
  $("pol-eu").checked = c.require_eu_data_region ?? false;
  $("pol-blocks").checked = c.content_filter_blocks_requests ?? false;
  const rest = Object.fromEntries(Object.entries(c).filter(([k]) => !TYPED[t].includes(k)));
  $("pol-config").value = Object.keys(rest).length ? JSON.stringify(rest, null, 2) : "";
  $("policy-error").textContent = "";
  showTypedFields(t);
}

async function edit(p) {
  try {
    const res = await call("GET", `${base(p.policy_type)}/${encodeURIComponent(p.id)}`);
    fillForm(res.data);
    $("pol-name").focus();
  } catch (err) {
    status(`Policy ${p.name}: ${err.message}`);
  }
}

/** The config the form says: its typed fields over the JSON of the other settings. */
function formConfig(t) {
  const text = $("pol-config").value.trim();
  let config = {};
  if (text) {
    try {
      config = JSON.parse(text);
    } catch (err) {
      throw new Error(`Other settings are not JSON: ${err.message}`);
    }
  }
  if (t === "budget") {
    const limit = $("pol-limit").value.trim();
    config.limit_usd = limit === "" ? undefined : Number(limit);
    config.reset_interval = $("pol-reset").value;
    config.include_byok_in_budgets = $("pol-byok").checked;
  } else if (t === "model_availability") {
    for (const f of LIST_FIELDS) {
      const items = $(`pol-${f}`)
        .value.split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      if (items.length > 0) config[f] = items;
    }
    if ($("pol-zdr").checked) config.enforce_zdr = true;
    if ($("pol-eu").checked) config.require_eu_data_region = true;
  } else if ($("pol-blocks").checked) config.content_filter_blocks_requests = true;
  return config;
}

async function save(event) {
  event.preventDefault();
  $("policy-error").textContent = "";
  const t = type();
  if (!confirmMove(t)) return;
  try {
    const body = {
      name: $("pol-name").value.trim(),
      config: formConfig(t),
      is_workspace_default: $("pol-default").checked,
    };
    const res = editing
      ? await call("PUT", `${base(t)}/${encodeURIComponent(editing.id)}`, body)
      : await call("POST", base(t), { ...body, policy_type: t, workspace_id: workspace() });
    status(`Policy ${res.data.name} ${editing ? "saved" : "created"} (${res.data.id}).`);
    fillForm(undefined);
    await refreshPolicies();
  } catch (err) {
    $("policy-error").textContent = err.message;
  }
}

async function remove(p) {
  if (!window.confirm(`Delete policy ${p.name} (${p.id})? Its assignments go with it.`)) return;
  if (!confirmMove(p.policy_type)) return;
  try {
    await call("DELETE", `${base(p.policy_type)}/${encodeURIComponent(p.id)}`);
    status(`Policy ${p.name} deleted.`);
    if (editing?.id === p.id) fillForm(undefined);
    await refreshPolicies();
  } catch (err) {
    status(`Delete ${p.name}: ${err.message}`);
  }
}

/**
 * The first write of a type through policies moves the type off the workspace's guardrails for
 * good (docs/guardrail-policies.md): while mapped policies are listed, the operator confirms it.
 */
function confirmMove(t) {
  const mapped = policies.filter((p) => p.is_legacy_mapped);
  if (mapped.length === 0) return true;
  return window.confirm(
    `This is the first ${TYPE_WORDS[t].toLowerCase()} policy change in this workspace: from now on ` +
      `its guardrails no longer govern ${TYPE_WORDS[t].toLowerCase()}, and their parts of it ` +
      `(${mapped.map((p) => p.name).join(", ")}) become policies managed here. Continue?`,
  );
}

/** The subject the assignment form names: a key's hash or a member's user id. */
function subject() {
  const kind = $("pol-kind").value;
  const id = kind === "api-keys" ? $("pol-key").value : $("pol-member").value.trim();
  const name = kind === "api-keys" ? `key ${keyName(id)}` : `member ${id}`;
  return { kind, id, name };
}

function stateUrl(s, t) {
  const q = new URLSearchParams({ workspace_id: workspace(), policy_type: t });
  return `/guardrails/policies/assignments/${s.kind}/${encodeURIComponent(s.id)}?${q}`;
}

/** An assignment state in words: "budget policy Team cap, directly". */
function stateWords(st) {
  const parts = [];
  if (st.policy_ids.length > 0) parts.push(`assigned ${st.policy_ids.map(policyName).join(", ")}`);
  if (st.workspace_default_policy_ids.length > 0)
    parts.push(
      `inherits the workspace default ${st.workspace_default_policy_ids.map(policyName).join(", ")}`,
    );
  if (st.opted_out) parts.push("opted out of the workspace default");
  return parts.join("; ") || "no policy of this type";
}

/** Whether a workspace-wide policy covers workspace `ws`. */
function covers(p, ws) {
  return p.is_default ? !p.opted_out_workspace_ids.includes(ws) : p.workspace_ids.includes(ws);
}

const governsTable = dataTable({
  caption: "Policies per type",
  id: "pol-governs-table",
  one: "type",
  pageSize: 10,
  sort: { key: "type", dir: 1 },
  columns: [
    { key: "type", label: "Type", text: (r) => TYPE_WORDS[r.t], sort: (r) => TYPES.indexOf(r.t) },
    { key: "direct", label: "Assigned directly", text: (r) => list(r.direct) },
    { key: "inherited", label: "Workspace default inherited", text: (r) => list(r.inherited) },
    { key: "optout", label: "Opted out of the default", text: (r) => (r.opted_out ? "yes" : "no") },
    { key: "account", label: "Workspace-wide (cannot be loosened)", text: (r) => list(r.account) },
  ],
});

/**
 * Reads and shows what governs the subject, per type: its own and inherited policies and the
 * workspace-wide ones over them. What it read is what the next change expects.
 */
async function governance() {
  const s = subject();
  if (!s.id) {
    $("pol-assign-result").textContent = "Choose a key or type a member id first.";
    return;
  }
  const ws = workspace();
  const rows = await Promise.all(
    TYPES.map(async (t) => {
      const [state, mine, account] = await Promise.all([
        call("GET", stateUrl(s, t)),
        call("GET", `${base(t)}?workspace_id=${encodeURIComponent(ws)}`),
        call("GET", `/guardrails/policies/account?policy_type=${t}`),
      ]);
      seen.set(seenKey(s, t), state.data);
      const names = new Map(mine.data.map((p) => [p.id, p.name]));
      const named = (ids) => ids.map((id) => names.get(id) ?? id);
      return {
        t,
        direct: named(state.data.policy_ids),
        inherited: named(state.data.workspace_default_policy_ids),
        opted_out: state.data.opted_out,
        account: account.data.filter((p) => covers(p, ws)).map((p) => p.name),
      };
    }),
  );
  $("pol-governs-h").textContent = `What governs ${s.name}`;
  governsTable.setRows(rows);
  if (!$("pol-governs").contains(governsTable.element)) show("pol-governs", governsTable.element);
  $("pol-governs-card").hidden = false;
}

/** Assigns or removes the chosen policy, expecting the state last shown for the subject. */
async function changeAssignment(event, assigned) {
  event?.preventDefault();
  const s = subject();
  const t = type();
  const policyId = $("pol-assign-policy").value;
  $("pol-assign-result").textContent = "";
  try {
    if (!s.id) throw new Error("Choose a key or type a member id first.");
    if (!confirmMove(t)) return;
    if (!seen.has(seenKey(s, t))) await governance();
    const res = await call(
      "PUT",
      `/guardrails/policies/assignments/${s.kind}/${encodeURIComponent(s.id)}`,
      {
        assigned,
        expected_assignment: seen.get(seenKey(s, t)),
        policy_id: policyId,
        policy_type: t,
        workspace_id: workspace(),
      },
    );
    const what = `${policyName(policyId)} ${assigned ? "assigned to" : "removed from"} ${s.name}`;
    $("pol-assign-result").textContent = res.data
      ? `${what}.`
      : `Nothing to change: ${what} already.`;
    await governance();
    await refreshPolicies();
  } catch (err) {
    if (!err.message.startsWith("409:")) {
      $("pol-assign-result").textContent = err.message;
      return;
    }
    // Someone changed it since it was shown: say what it is now, and expect that next time.
    try {
      const now = (await call("GET", stateUrl(s, t))).data;
      seen.set(seenKey(s, t), now);
      // The policy it now has may be new to this page: read the list again to name it.
      await refreshPolicies();
      $("pol-assign-result").textContent =
        `Not changed: someone else changed the ${TYPE_WORDS[t].toLowerCase()} policy of ${s.name} since it was shown. ` +
        `It now has ${stateWords(now)}. Check it, then try again.`;
      await governance();
    } catch (again) {
      $("pol-assign-result").textContent = `${err.message} (reading it again: ${again.message})`;
    }
  }
}

export function setupPolicies() {
  $("policy-form").addEventListener("submit", save);
  $("pol-new").addEventListener("click", () => fillForm(undefined));
  for (const id of ["pol-type", "pol-workspace"]) {
    $(id).addEventListener("change", () => {
      fillForm(undefined);
      refreshPolicies().catch((err) => status(`Policies: ${err.message}`));
    });
  }
  $("pol-kind").addEventListener("change", () => {
    const keys = $("pol-kind").value === "api-keys";
    $("pol-key-field").hidden = !keys;
    $("pol-member-field").hidden = keys;
  });
  $("pol-assign-form").addEventListener("submit", (event) => changeAssignment(event, true));
  $("pol-unassign").addEventListener("click", () => changeAssignment(undefined, false));
  $("pol-show-governs").addEventListener("click", () =>
    governance().catch((err) => {
      $("pol-assign-result").textContent = err.message;
    }),
  );
  fillForm(undefined);
}

export function resetPolicies() {
  policies = [];
  seen.clear();
  table.setRows([]);
  accountTable.setRows([]);
  governsTable.setRows([]);
  $("pol-governs-card").hidden = true;
  fillForm(undefined);
}
