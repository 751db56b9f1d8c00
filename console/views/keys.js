// API keys: create (the secret shown once, with a copy button), rename and set limits, expiry
// and rate in a dialog, disable and enable, delete after a confirmation; usage per key.

import { call } from "../lib/api.js";
import { $, button, el, show, status } from "../lib/dom.js";
import { dateTime, fromLocalInput, money, reset, toLocalInput } from "../lib/format.js";
import { loadKeys, workspaceName } from "../lib/names.js";
import { dataTable } from "../lib/table.js";
import { keepTableState, viewParams } from "../lib/url-state.js";

/** A number field as typed: a non-number goes to the API as it is, and its 400 names the field. */
function numberOrText(value) {
  const v = value.trim();
  if (v === "") return null;
  return Number.isNaN(Number(v)) ? v : Number(v);
}

function state(k) {
  if (k.disabled) return "Disabled";
  if (k.expires_at && new Date(k.expires_at) <= new Date()) return "Expired";
  return "Active";
}

function limitText(k) {
  if (k.limit === null || k.limit === undefined) return "none";
  const left = k.limit_remaining === null ? "" : `, ${money(k.limit_remaining)} left`;
  return `${money(k.limit)} ${reset(k.limit_reset)}${left}`;
}

const table = dataTable({
  caption: "Keys",
  id: "keys-table",
  onState: keepTableState(),
  columns: [
    { key: "name", label: "Name", text: (k) => k.name },
    {
      key: "state",
      label: "Status",
      text: state,
      cell: (k) => el("span", { className: `badge ${state(k).toLowerCase()}` }, state(k)),
    },
    { key: "limit", label: "Limit", text: limitText, sort: (k) => k.limit ?? -1, numeric: true },
    {
      key: "today",
      label: "Usage today",
      text: (k) => money(k.usage_daily),
      sort: (k) => k.usage_daily,
      numeric: true,
    },
    {
      key: "month",
      label: "Usage this month",
      text: (k) => money(k.usage_monthly),
      sort: (k) => k.usage_monthly,
      numeric: true,
    },
    {
      key: "usage",
      label: "Usage all-time",
      text: (k) => money(k.usage),
      sort: (k) => k.usage,
      numeric: true,
    },
    { key: "workspace", label: "Workspace", text: (k) => workspaceName(k.workspace_id) },
    { key: "owner", label: "Member", text: (k) => k.member_user_id ?? "—" },
    {
      key: "expires",
      label: "Expires",
      text: (k) => (k.expires_at ? dateTime(k.expires_at) : "never"),
      sort: (k) => k.expires_at ?? "~",
    },
    { key: "hash", label: "Hash", text: (k) => k.hash, className: "mono clip", secondary: true },
    { key: "label", label: "Label", text: (k) => k.label, className: "mono", secondary: true },
    { key: "kind", label: "Kind", text: (k) => k.kind, secondary: true },
    {
      key: "created",
      label: "Created",
      text: (k) => dateTime(k.created_at),
      sort: (k) => k.created_at,
      secondary: true,
    },
  ],
  actions: (k) => [
    button("Edit", `Edit key ${k.name}`, () => openEdit(k)),
    k.disabled
      ? button("Enable", `Enable key ${k.name}`, () => setDisabled(k, false))
      : button("Disable", `Disable key ${k.name}`, () => setDisabled(k, true)),
    button("Explain", `Explain ${k.name}`, () => {
      location.hash = "#explain";
      $("explain-hash").value = k.hash;
      $("explain-form").requestSubmit();
    }),
    button("Delete", `Delete key ${k.name}`, () => deleteKey(k), "danger"),
  ],
});

/** Called after the key list changed anywhere: the views that name keys refresh their choices. */
let onChange = () => {};

export async function refreshKeys() {
  table.setState(viewParams("keys"));
  if (!$("keys-list").contains(table.element)) show("keys-list", table.element);
  table.setRows(await loadKeys());
  onChange();
}

async function createKey(event) {
  event.preventDefault();
  $("key-form-error").textContent = "";
  const body = { name: $("k-name").value };
  if ($("k-workspace").value) body.workspace_id = $("k-workspace").value;
  if ($("k-member").value.trim()) body.member_user_id = $("k-member").value.trim();
  const limit = numberOrText($("k-limit").value);
  if (limit !== null) body.limit = limit;
  if ($("k-reset").value) body.limit_reset = $("k-reset").value;
  if ($("k-expires").value) body.expires_at = fromLocalInput($("k-expires").value);
  const rate = numberOrText($("k-rate").value);
  if (rate !== null) body.rate_limit_per_minute = rate;
  try {
    const res = await call("POST", "/keys", body);
    $("key-form").reset();
    $("key-secret-name").textContent = res.data.name;
    $("key-secret").value = res.key;
    $("key-secret-result").textContent = "";
    $("key-secret-card").hidden = false;
    status(`Key ${res.data.name} created: copy its secret now, it is not shown again.`);
    await refreshKeys();
    $("key-secret-copy").focus();
  } catch (err) {
    $("key-form-error").textContent = err.message;
  }
}

async function copySecret() {
  try {
    await navigator.clipboard.writeText($("key-secret").value);
    $("key-secret-result").textContent = "Copied to the clipboard.";
  } catch (err) {
    // No clipboard permission (an insecure origin, a policy): the text is selected to copy by hand.
    $("key-secret").select();
    $("key-secret-result").textContent =
      `Could not copy (${err.message}): the secret is selected, press Ctrl+C.`;
  }
}

/** Once dismissed the secret is gone from the page: it lives nowhere else in the console. */
function forgetSecret() {
  $("key-secret").value = "";
  $("key-secret-card").hidden = true;
}

/** The key being edited in the dialog, as the API last returned it. */
let editing;

function openEdit(k) {
  editing = k;
  $("key-dialog-h").textContent = `Edit key ${k.name}`;
  $("ke-name").value = k.name;
  $("ke-limit").value = k.limit ?? "";
  $("ke-reset").value = k.limit_reset ?? "";
  $("ke-expires").value = toLocalInput(k.expires_at);
  $("ke-rate").value = k.rate_limit_per_minute ?? "";
  $("key-edit-error").textContent = "";
  $("key-dialog").showModal();
  $("ke-name").focus();
}

/** PATCH semantics: only the fields that differ from the key as loaded are sent. */
function editRequest() {
  const now = {
    name: $("ke-name").value,
    limit: numberOrText($("ke-limit").value),
    limit_reset: $("ke-reset").value || null,
    expires_at: fromLocalInput($("ke-expires").value),
    rate_limit_per_minute: numberOrText($("ke-rate").value),
  };
  const before = {
    name: editing.name,
    limit: editing.limit ?? null,
    limit_reset: editing.limit_reset ?? null,
    // Compared at the minute the field shows, so an untouched expiry is no change.
    expires_at: fromLocalInput(toLocalInput(editing.expires_at)),
    rate_limit_per_minute: editing.rate_limit_per_minute ?? null,
  };
  const body = {};
  for (const [field, value] of Object.entries(now)) {
    if (value !== before[field]) body[field] = value;
  }
  return body;
}

async function saveEdit(event) {
  event.preventDefault();
  const body = editRequest();
  if (Object.keys(body).length === 0) {
    $("key-edit-error").textContent = "Nothing changed: edit a field, then save.";
    return;
  }
  try {
    const res = await call("PATCH", `/keys/${encodeURIComponent(editing.hash)}`, body);
    $("key-dialog").close();
    status(`Key ${res.data.name} saved.`);
    await refreshKeys();
  } catch (err) {
    $("key-edit-error").textContent = err.message;
  }
}

async function setDisabled(k, disabled) {
  try {
    await call("PATCH", `/keys/${encodeURIComponent(k.hash)}`, { disabled });
    status(`Key ${k.name} ${disabled ? "disabled" : "enabled"}.`);
    await refreshKeys();
  } catch (err) {
    status(`Key ${k.name}: ${err.message}`);
  }
}

async function deleteKey(k) {
  if (
    !window.confirm(
      `Delete key ${k.name} (${k.label})? Requests with it fail from now on; this cannot be undone.`,
    )
  ) {
    status(`Key ${k.name} kept.`);
    return;
  }
  try {
    await call("DELETE", `/keys/${encodeURIComponent(k.hash)}`);
    status(`Key ${k.name} deleted.`);
    await refreshKeys();
  } catch (err) {
    status(`Delete key ${k.name}: ${err.message}`);
  }
}

export function setupKeys(changed) {
  onChange = changed;
  $("key-form").addEventListener("submit", createKey);
  $("key-secret-copy").addEventListener("click", copySecret);
  $("key-secret-done").addEventListener("click", forgetSecret);
  $("key-edit-form").addEventListener("submit", saveEdit);
  $("key-edit-cancel").addEventListener("click", () => $("key-dialog").close());
}

export function resetKeys() {
  forgetSecret();
  if ($("key-dialog").open) $("key-dialog").close();
}
