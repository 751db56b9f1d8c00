// Budget-alert webhooks: create, edit, delete (after a confirmation), send a test event, and
// each one's deliveries (what was sent, when, the receiver's answer, the retries).

import { call, fetchAll, query } from "../lib/api.js";
import { cursorPaging } from "../lib/cursor.js";
import { $, button, el, show, status } from "../lib/dom.js";
import { dateTime, list, money, number } from "../lib/format.js";
import { guardrailName, keyName, workspaceName } from "../lib/names.js";
import { dataTable } from "../lib/table.js";
import { keepTableState, viewParams } from "../lib/url-state.js";

let editing;
let shownDeliveries;

const table = dataTable({
  caption: "Webhooks",
  id: "webhooks-table",
  onState: keepTableState(),
  columns: [
    { key: "url", label: "Receiver", text: (w) => w.url, className: "mono wrap" },
    { key: "workspace", label: "Workspace", text: (w) => workspaceName(w.workspace_id) },
    {
      key: "thresholds",
      label: "Thresholds",
      text: (w) => list((w.thresholds_pct ?? []).map((p) => `${p}%`)),
    },
    {
      key: "credits",
      label: "Credits below",
      text: (w) => (w.credits_below_usd === null ? "—" : money(w.credits_below_usd)),
      sort: (w) => w.credits_below_usd ?? -1,
      numeric: true,
    },
    {
      key: "enabled",
      label: "Status",
      text: (w) => (w.enabled ? "enabled" : "disabled"),
      cell: (w) =>
        el(
          "span",
          { className: `badge ${w.enabled ? "active" : "disabled"}` },
          w.enabled ? "enabled" : "disabled",
        ),
    },
    {
      key: "created",
      label: "Created",
      text: (w) => dateTime(w.created_at),
      sort: (w) => w.created_at,
      secondary: true,
    },
  ],
  actions: (w) => [
    button("Deliveries", `Deliveries of ${w.url}`, () => showDeliveries(w)),
    button("Send test", `Send test event to ${w.url}`, () => sendTest(w)),
    button("Edit", `Edit webhook ${w.url}`, () => fillForm(w)),
    button("Delete", `Delete webhook ${w.url}`, () => deleteWebhook(w), "danger"),
  ],
});

const paging = cursorPaging(
  (cursor) =>
    call(
      "GET",
      `/webhooks/${encodeURIComponent(shownDeliveries.id)}/deliveries${query({ limit: 25, cursor })}`,
    ),
  (message) => {
    $("webhooks-error").textContent = message;
  },
);

/** The receiver's answer to the last try: its HTTP status, or why there was none. */
function answer(d) {
  if (d.last_status_code) return `HTTP ${d.last_status_code}`;
  return d.last_error ?? "—";
}

/** Whose limit an event is about, by name: the key's, else the guardrail's. */
function subjectOf(data) {
  if (!data) return "—";
  if (data.key_hash) return keyName(data.key_hash);
  if (data.guardrail_id) return guardrailName(data.guardrail_id);
  return "—";
}

function spendOf(data) {
  if (!data || data.spend_usd == null) return "—";
  return data.limit_usd == null
    ? money(data.spend_usd)
    : `${money(data.spend_usd)} of ${money(data.limit_usd)}`;
}

/** The event as sent, under the list: what the receiver got, to read or copy. */
function showPayload(d) {
  $("delivery-payload-h").textContent = `Payload of ${d.event_type} (${dateTime(d.created_at)})`;
  $("delivery-payload").textContent = JSON.stringify(d.payload, null, 2);
  $("delivery-payload-box").hidden = false;
  $("delivery-payload").focus();
}

const deliveries = dataTable({
  caption: "Deliveries",
  one: "delivery",
  id: "deliveries-table",
  server: paging.pager,
  actions: (d) => [
    button("Payload", `Payload of the ${d.event_type} delivery at ${dateTime(d.created_at)}`, () =>
      showPayload(d),
    ),
  ],
  sort: { key: "at", dir: -1 },
  columns: [
    { key: "at", label: "When", text: (d) => dateTime(d.created_at), sort: (d) => d.created_at },
    { key: "event", label: "Event", text: (d) => d.event_type, className: "mono" },
    {
      key: "threshold",
      label: "Threshold",
      text: (d) =>
        d.payload?.data?.threshold_pct == null ? "—" : `${d.payload.data.threshold_pct}%`,
      sort: (d) => d.payload?.data?.threshold_pct ?? -1,
      numeric: true,
    },
    { key: "subject", label: "Key or guardrail", text: (d) => subjectOf(d.payload?.data) },
    {
      key: "spend",
      label: "Spend of limit",
      text: (d) => spendOf(d.payload?.data),
      numeric: true,
    },
    {
      key: "status",
      label: "Status",
      text: (d) => d.status,
      cell: (d) => el("span", { className: `badge ${d.status}` }, d.status),
    },
    {
      key: "attempts",
      label: "Attempts",
      text: (d) => number(d.attempts),
      sort: (d) => d.attempts,
      numeric: true,
    },
    { key: "answer", label: "Receiver's answer", text: answer },
    {
      key: "delivered",
      label: "Delivered",
      text: (d) => (d.delivered_at ? dateTime(d.delivered_at) : "—"),
      sort: (d) => d.delivered_at ?? "",
    },
    {
      key: "next",
      label: "Next try",
      text: (d) => (d.next_attempt_at ? dateTime(d.next_attempt_at) : "—"),
      sort: (d) => d.next_attempt_at ?? "",
    },
  ],
});
paging.attach(deliveries);

export async function refreshWebhooks() {
  table.setState(viewParams("webhooks"));
  if (!$("webhooks-list").contains(table.element)) show("webhooks-list", table.element);
  table.setRows(await fetchAll("/webhooks"));
  if (shownDeliveries) await showDeliveries(shownDeliveries);
}

/** While a delivery on show is pending, the list is read again every few seconds. */
let refreshTimer;
const REFRESH_MS = 2000;

function watchPending() {
  clearTimeout(refreshTimer);
  const pending = deliveries.rows().some((d) => d.status === "pending");
  $("deliveries-note").textContent = pending
    ? "A delivery is pending: this list refreshes every 2 seconds until it is settled."
    : "";
  if (!pending) return;
  refreshTimer = setTimeout(() => {
    // Only while the deliveries are on screen: another view or a closed card stops it.
    if ($("webhooks").hidden || $("deliveries").hidden || !shownDeliveries) return;
    paging.refresh().then(watchPending);
  }, REFRESH_MS);
}

async function showDeliveries(w) {
  try {
    if (shownDeliveries?.id !== w.id) $("delivery-payload-box").hidden = true;
    shownDeliveries = w;
    $("deliveries-h").textContent = `Deliveries to ${w.url}`;
    if (!$("deliveries-list").contains(deliveries.element))
      show("deliveries-list", deliveries.element);
    await paging.reload();
    $("deliveries").hidden = false;
    watchPending();
  } catch (err) {
    $("webhooks-error").textContent = err.message;
  }
}

async function sendTest(w) {
  try {
    await call("POST", `/webhooks/${encodeURIComponent(w.id)}/test`);
    status(`Test event sent to ${w.url}.`);
    await showDeliveries(w);
  } catch (err) {
    $("webhooks-error").textContent = err.message;
  }
}

function fillForm(w) {
  editing = w;
  $("wh-id").value = w?.id ?? "";
  $("wh-url").value = w?.url ?? "";
  $("wh-secret").value = "";
  if (w) $("wh-workspace").value = w.workspace_id ?? "";
  $("wh-workspace").disabled = Boolean(w);
  $("wh-thresholds").value = (w?.thresholds_pct ?? [50, 80, 100]).join(", ");
  $("wh-credits").value = w?.credits_below_usd ?? "";
  $("wh-enabled").checked = w?.enabled ?? true;
  $("webhook-form-h").textContent = w ? `Edit webhook ${w.url}` : "Create a webhook";
  $("wh-submit").textContent = w ? "Save webhook" : "Create webhook";
  $("webhook-error").textContent = "";
  if (w) $("wh-url").focus();
}

/** "50, 80, 100" as numbers; anything else goes as typed, and the API's 400 names it. */
function thresholds(text) {
  return text
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean)
    .map((x) => (Number.isNaN(Number(x)) ? x : Number(x)));
}

async function saveWebhook(event) {
  event.preventDefault();
  $("webhook-error").textContent = "";
  const credits = $("wh-credits").value.trim();
  const now = {
    url: $("wh-url").value.trim(),
    thresholds_pct: thresholds($("wh-thresholds").value),
    credits_below_usd:
      credits === "" ? null : Number.isNaN(Number(credits)) ? credits : Number(credits),
    enabled: $("wh-enabled").checked,
  };
  let body = now;
  if (editing) {
    body = {};
    for (const [field, value] of Object.entries(now)) {
      if (JSON.stringify(value) !== JSON.stringify(editing[field] ?? null)) body[field] = value;
    }
  } else body.workspace_id = $("wh-workspace").value;
  if ($("wh-secret").value) body.secret = $("wh-secret").value;
  if (editing && Object.keys(body).length === 0) {
    $("webhook-error").textContent = "Nothing changed: edit a field, then save.";
    return;
  }
  try {
    const res = editing
      ? await call("PATCH", `/webhooks/${encodeURIComponent(editing.id)}`, body)
      : await call("POST", "/webhooks", body);
    if (res.secret) {
      // Generated (or sent) on create: shown this once, like a key's secret.
      $("webhook-secret").value = res.secret;
      $("webhook-secret-result").textContent = "";
      $("webhook-secret-card").hidden = false;
    }
    status(`Webhook ${res.data.url} ${editing ? "saved" : "created"}.`);
    fillForm(undefined);
    await refreshWebhooks();
  } catch (err) {
    $("webhook-error").textContent = err.message;
  }
}

async function deleteWebhook(w) {
  if (!window.confirm(`Delete the webhook to ${w.url}? Its alerts stop; this cannot be undone.`)) {
    status(`Webhook ${w.url} kept.`);
    return;
  }
  try {
    await call("DELETE", `/webhooks/${encodeURIComponent(w.id)}`);
    status(`Webhook ${w.url} deleted.`);
    if (editing?.id === w.id) fillForm(undefined);
    if (shownDeliveries?.id === w.id) {
      shownDeliveries = undefined;
      $("deliveries").hidden = true;
    }
    await refreshWebhooks();
  } catch (err) {
    $("webhooks-error").textContent = err.message;
  }
}

async function copySecret() {
  try {
    await navigator.clipboard.writeText($("webhook-secret").value);
    $("webhook-secret-result").textContent = "Copied to the clipboard.";
  } catch (err) {
    $("webhook-secret").select();
    $("webhook-secret-result").textContent =
      `Could not copy (${err.message}): the secret is selected, press Ctrl+C.`;
  }
}

function forgetSecret() {
  $("webhook-secret").value = "";
  $("webhook-secret-card").hidden = true;
}

export function setupWebhooks() {
  $("webhook-secret-copy").addEventListener("click", copySecret);
  $("webhook-secret-done").addEventListener("click", forgetSecret);
  $("webhook-form").addEventListener("submit", saveWebhook);
  $("wh-new").addEventListener("click", () => {
    fillForm(undefined);
    $("wh-url").focus();
  });
}

export function resetWebhooks() {
  fillForm(undefined);
  forgetSecret();
  shownDeliveries = undefined;
  $("deliveries").hidden = true;
}
