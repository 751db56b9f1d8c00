// Guardrails of a chosen workspace: list, create and edit (guardrail-form.js holds the form),
// delete after a confirmation, and their assignments to keys and members.

import { API, call, errorMessage, managementKey } from "../lib/api.js";
import { $, button, options, show, status } from "../lib/dom.js";
import { dateTime, list, money, reset } from "../lib/format.js";
import { allKeys, forgetGuardrail, keyName, loadGuardrails } from "../lib/names.js";
import { dataTable } from "../lib/table.js";
import { keepTableState, viewParams } from "../lib/url-state.js";
import { editingId, fillGuardrailForm, guardrailRequest } from "./guardrail-form.js";
import { hideHistory, setupHistory, showHistory } from "./guardrail-history.js";
import { hideWhatIf, setupWhatIf, showWhatIf } from "./guardrail-whatif.js";

/** The guardrails on show (one workspace's). */
let guardrails = [];
/** The guardrail whose assignments are on show, refreshed after each change to them. */
let shownAssignments;

function filters(g) {
  const builtins = (g.content_filter_builtins ?? []).map((b) => `${b.slug}: ${b.action}`);
  const custom = (g.content_filters ?? []).map((f) => `/${f.pattern}/: ${f.action}`);
  return list([...builtins, ...custom]);
}

const table = dataTable({
  caption: "Guardrails",
  id: "guardrails-table",
  onState: keepTableState(),
  columns: [
    { key: "name", label: "Name", text: (g) => g.name },
    { key: "models", label: "Allowed models", text: (g) => list(g.allowed_models) },
    { key: "providers", label: "Allowed providers", text: (g) => list(g.allowed_providers) },
    { key: "filters", label: "Content filters", text: filters },
    {
      key: "limit",
      label: "Budget",
      text: (g) =>
        g.limit_usd === null ? "—" : `${money(g.limit_usd)} ${reset(g.reset_interval)}`,
      sort: (g) => g.limit_usd ?? -1,
      numeric: true,
    },
    { key: "id", label: "ID", text: (g) => g.id, className: "mono clip", secondary: true },
  ],
  actions: (g) => [
    button("Edit", `Edit ${g.name}`, () => {
      fillGuardrailForm(g);
      $("g-name").focus();
    }),
    button("Assignments", `Assignments of ${g.name}`, () => showAssignments(g.id)),
    button("History", `History of ${g.name}`, () => showHistory(g)),
    button("What-if", `What-if on ${g.name}`, () => showWhatIf(g)),
    button("Delete", `Delete ${g.name}`, () => deleteGuardrail(g), "danger"),
  ],
});

export async function refreshGuardrails() {
  table.setState(viewParams("guardrails"));
  if (!$("guardrails-list").contains(table.element)) show("guardrails-list", table.element);
  guardrails = await loadGuardrails($("g-list-workspace").value);
  table.setRows(guardrails);
  for (const id of ["assign-guardrail", "assign-member-guardrail"]) {
    options(
      $(id),
      guardrails,
      (g) => g.id,
      (g) => g.name,
    );
  }
}

/** The keys a guardrail can be assigned to, named (refreshed with the keys). */
export function fillKeyChoices() {
  const keys = allKeys().filter((k) => k.kind === "standard");
  options(
    $("assign-key"),
    keys,
    (k) => k.hash,
    (k) => `${k.name} (${k.label})`,
  );
  // Members have no list of their own: the owners of keys are the ones the console can suggest.
  const members = [
    ...new Set(
      allKeys()
        .map((k) => k.member_user_id)
        .filter(Boolean),
    ),
  ];
  options(
    $("member-ids"),
    members,
    (m) => m,
    (m) => m,
  );
}

function workspaceShown(id) {
  return [...$("g-list-workspace").options].some((o) => o.value === id);
}

async function saveGuardrail(event) {
  event.preventDefault();
  const id = $("g-id").value;
  $("guardrail-error").textContent = "";
  const body = guardrailRequest();
  if (id && Object.keys(body).length === 0) {
    // The API refuses an empty update; saying so here is plainer than its 400.
    $("guardrail-error").textContent = "Nothing changed: edit a field, then save.";
    return;
  }
  try {
    const res = id
      ? await call("PATCH", `/guardrails/${encodeURIComponent(id)}`, body)
      : await call("POST", "/guardrails", body);
    status(`Guardrail ${res.data.name} ${id ? "saved" : "created"} (${res.data.id}).`);
    // The list shows one workspace: the one that holds what was just saved.
    if (workspaceShown(res.data.workspace_id)) $("g-list-workspace").value = res.data.workspace_id;
    await refreshGuardrails();
    fillGuardrailForm(undefined);
  } catch (err) {
    $("guardrail-error").textContent = err.message;
  }
}

async function deleteGuardrail(g) {
  if (!window.confirm(`Delete guardrail ${g.name} (${g.id})? This cannot be undone.`)) {
    status(`Guardrail ${g.name} kept.`);
    return;
  }
  try {
    await call("DELETE", `/guardrails/${encodeURIComponent(g.id)}`);
    status(`Guardrail ${g.name} deleted.`);
    forgetGuardrail(g.id);
    if (editingId() === g.id) fillGuardrailForm(undefined);
    if (shownAssignments === g.id) {
      shownAssignments = undefined;
      $("assignments").hidden = true;
    }
    await refreshGuardrails();
  } catch (err) {
    status(`Delete ${g.name}: ${err.message}`);
  }
}

async function unassign(guardrailId, kind, subject, name) {
  const field = kind === "keys" ? "key_hashes" : "member_user_ids";
  try {
    const res = await call(
      "POST",
      `/guardrails/${encodeURIComponent(guardrailId)}/assignments/${kind}/remove`,
      { [field]: [subject] },
    );
    $("assignments-result").textContent = `Unassigned ${name}: ${res.unassigned_count} removed.`;
    await showAssignments(guardrailId);
  } catch (err) {
    $("assignments-result").textContent = err.message;
  }
}

const assignedKeys = dataTable({
  caption: "Assigned keys",
  pageSize: 10,
  columns: [
    { key: "name", label: "Key", text: (a) => a.key_name || keyName(a.key_hash) },
    { key: "label", label: "Label", text: (a) => a.key_label },
    { key: "hash", label: "Hash", text: (a) => a.key_hash, className: "mono" },
    {
      key: "at",
      label: "Assigned",
      text: (a) => dateTime(a.created_at),
      sort: (a) => a.created_at,
    },
  ],
  actions: (a) => [
    button("Unassign", `Unassign key ${a.key_name}`, () =>
      unassign(shownAssignments, "keys", a.key_hash, `key ${a.key_name}`),
    ),
  ],
});

const assignedMembers = dataTable({
  caption: "Assigned members",
  pageSize: 10,
  columns: [
    { key: "user", label: "Member", text: (a) => a.user_id },
    {
      key: "at",
      label: "Assigned",
      text: (a) => dateTime(a.created_at),
      sort: (a) => a.created_at,
    },
  ],
  actions: (a) => [
    button("Unassign", `Unassign member ${a.user_id}`, () =>
      unassign(shownAssignments, "members", a.user_id, `member ${a.user_id}`),
    ),
  ],
});

async function showAssignments(guardrailId) {
  const g = guardrails.find((x) => x.id === guardrailId);
  const base = `/guardrails/${encodeURIComponent(guardrailId)}/assignments`;
  try {
    const [keys, members] = await Promise.all([
      call("GET", `${base}/keys?limit=100`),
      call("GET", `${base}/members?limit=100`),
    ]);
    shownAssignments = guardrailId;
    $("assignments-h").textContent = `Assignments of ${g?.name ?? guardrailId}`;
    assignedKeys.setRows(keys.data);
    assignedMembers.setRows(members.data);
    show("assignments-keys", assignedKeys.element);
    show("assignments-members", assignedMembers.element);
    $("assignments").hidden = false;
  } catch (err) {
    status(`Assignments: ${err.message}`);
  }
}

async function assign(event, kind) {
  event.preventDefault();
  const [select, subject, result, field] =
    kind === "keys"
      ? ["assign-guardrail", "assign-key", "assign-result", "key_hashes"]
      : ["assign-member-guardrail", "assign-member", "assign-member-result", "member_user_ids"];
  const id = $(select).value;
  try {
    const res = await call("POST", `/guardrails/${encodeURIComponent(id)}/assignments/${kind}`, {
      [field]: [$(subject).value.trim()],
    });
    $(result).textContent =
      kind === "keys"
        ? `Assigned: ${res.assigned_count} key(s).`
        : `Assigned: ${res.assigned_count} member(s).`;
    if (shownAssignments === id) await showAssignments(id);
  } catch (err) {
    $(result).textContent = err.message;
  }
}

/**
 * A workspace's default guardrail applies to all its traffic. Until configured it reads as 404;
 * a PATCH (this form's save) materializes it, so the form opens on its defaults then.
 */
export async function editWorkspaceDefault(w) {
  const id = w.default_guardrail_id;
  const res = await fetch(`${API}/guardrails/${encodeURIComponent(id)}`, {
    headers: { authorization: `Bearer ${managementKey()}` },
  });
  if (res.status !== 404 && !res.ok) {
    status(`Default guardrail of ${w.name}: ${await errorMessage(res)}`);
    return;
  }
  const g =
    res.status === 404
      ? { id, name: `Workspace ${w.id} Default`, workspace_id: w.id }
      : (await res.json()).data;
  location.hash = "#guardrails";
  fillGuardrailForm(g);
  status(
    res.status === 404
      ? `The default guardrail of ${w.name} is not configured yet: saving configures it.`
      : `Editing the default guardrail of ${w.name}.`,
  );
  $("g-name").focus();
}

export function resetGuardrails() {
  fillGuardrailForm(undefined);
  hideHistory();
  hideWhatIf();
  shownAssignments = undefined;
  $("assignments").hidden = true;
}

export function setupGuardrails() {
  $("guardrail-form").addEventListener("submit", saveGuardrail);
  $("g-new").addEventListener("click", () => {
    fillGuardrailForm(undefined);
    $("g-name").focus();
  });
  $("assign-form").addEventListener("submit", (event) => assign(event, "keys"));
  $("assign-member-form").addEventListener("submit", (event) => assign(event, "members"));
  setupHistory();
  setupWhatIf();
}
