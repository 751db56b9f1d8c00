// The policy form: create or replace one policy of the chosen type, its checks as JSON. A replace
// whose checks fail (409) lists the failing checks and offers to save it anyway (forced).

import { call } from "../lib/api.js";
import { $, el, status } from "../lib/dom.js";
import { base, confirmMove, TYPE_WORDS, type, workspace } from "./policy-common.js";

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

/** The policy being edited (as its GET answered it), and its checks as the form showed them. */
let editing;
let checksShown = "";
/** A replace refused by its checks: sent again, forced, when the operator says so. */
let refused;
/** Called with a policy the form saved (the list and panels read it again). */
let onSaved = async () => {};

/** The policy the form edits, if any. */
export const editingPolicy = () => editing;

const checksText = (checks) => (checks?.length ? JSON.stringify(checks, null, 2) : "");

function showTypedFields(t) {
  for (const fs of document.querySelectorAll("#policy-form [data-policy-type]"))
    fs.hidden = fs.dataset.policyType !== t;
  // Budget policies take no checks: an example request has no spend.
  $("pol-checks-field").hidden = t === "budget";
}

function clearRefusal() {
  refused = undefined;
  $("policy-error").textContent = "";
  $("pol-failing").replaceChildren();
  $("pol-force").hidden = true;
}

export function fillForm(p) {
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
  checksShown = checksText(p?.checks);
  $("pol-checks").value = checksShown;
  clearRefusal();
  showTypedFields(t);
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

/**
 * The checks field when the operator changed it: a list, or null (emptied: remove them). Left as
 * shown it is not sent, so a replace keeps the stored checks.
 */
function formChecks(t) {
  const text = $("pol-checks").value.trim();
  if (t === "budget" || text === checksShown.trim()) return undefined;
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`Checks are not JSON: ${err.message}`);
  }
}

/**
 * The form's change to policy `p` as the body a replace takes (name and config; the workspace
 * default only when changed), for a what-if or a shadow. Throws, saying what to do, when the
 * form is not on `p` or changes nothing.
 */
export function policyChange(p) {
  if (editing?.id !== p?.id || editing?.policy_type !== p?.policy_type)
    throw new Error(
      `The edit form is not on ${p?.name}: choose Edit on it, change fields, then take them.`,
    );
  const change = { name: $("pol-name").value.trim(), config: formConfig(p.policy_type) };
  const byDefault = $("pol-default").checked;
  if (byDefault !== editing.is_workspace_default) change.is_workspace_default = byDefault;
  const same =
    change.name === editing.name &&
    JSON.stringify(sorted(change.config)) === JSON.stringify(sorted(editing.config ?? {})) &&
    change.is_workspace_default === undefined;
  if (same) throw new Error("The edit form has no change yet: edit a field first.");
  return change;
}

/** An object with its keys in order (and unset ones left out): two configs compare as JSON. */
function sorted(o) {
  return Object.fromEntries(
    Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => [k, o[k]]),
  );
}

/** Sends a create or a replace; a replace refused by its checks is kept for a forced retry. */
async function send(t, target, body) {
  try {
    const res = target
      ? await call("PUT", `${base(t)}/${encodeURIComponent(target.id)}`, body)
      : await call("POST", base(t), { ...body, policy_type: t, workspace_id: workspace() });
    const forced = body.force ? " (forced past failing checks)" : "";
    status(`Policy ${res.data.name} ${target ? "saved" : "created"}${forced} (${res.data.id}).`);
    fillForm(undefined);
    await onSaved(res.data);
  } catch (err) {
    $("policy-error").textContent = err.message;
    const failing = err.metadata?.failing_checks;
    if (err.status !== 409 || !target || body.force || !Array.isArray(failing)) return;
    refused = { t, target, body };
    $("policy-error").textContent =
      `Not saved: the change fails ${failing.length === 1 ? "a check" : `${failing.length} checks`} of ${target.name}.`;
    $("pol-failing").replaceChildren(
      el("ul", { "aria-label": "Failing checks" }, ...failing.map((f) => el("li", {}, f))),
    );
    $("pol-force").hidden = false;
    $("pol-force").focus();
  }
}

async function save(event) {
  event.preventDefault();
  clearRefusal();
  const t = type();
  if (!confirmMove(t)) return;
  try {
    const body = {
      name: $("pol-name").value.trim(),
      config: formConfig(t),
      is_workspace_default: $("pol-default").checked,
    };
    const checks = formChecks(t);
    if (checks !== undefined) body.checks = checks;
    await send(t, editing, body);
  } catch (err) {
    $("policy-error").textContent = err.message;
  }
}

/** The refused replace again, forced: its audit event and version say so. */
async function force() {
  const r = refused;
  if (!r) return;
  clearRefusal();
  await send(r.t, r.target, { ...r.body, force: true });
}

/** `saved(policy)` is called after each create or replace. */
export function setupPolicyForm(saved) {
  onSaved = saved;
  $("policy-form").addEventListener("submit", save);
  $("pol-new").addEventListener("click", () => fillForm(undefined));
  $("pol-force").addEventListener("click", force);
  fillForm(undefined);
}
