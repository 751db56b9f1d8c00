// The audit log: every management write, who made it (the key's name), what changed (before and
// after, never a secret), newest first, filtered and paged by the API's cursor.

import { call, query } from "../lib/api.js";
import { cursorPaging } from "../lib/cursor.js";
import { $, options, show } from "../lib/dom.js";
import { dateTime, fromLocalInput, money } from "../lib/format.js";
import { allKeys, guardrailName, keyName, workspaceName } from "../lib/names.js";
import { dataTable } from "../lib/table.js";
import { setViewParams, viewParams } from "../lib/url-state.js";

/** Fields that hold dollars, shown as money. */
const MONEY = /(usd|limit|balance|amount|credits)$/;
/** Fields that hold an instant, shown as a date. */
const TIME = /(_at|expires)$/;

/** Lists whose items read in words: keys by name, filters as what they do. */
const WORDS = {
  key_hashes: (hash) => keyName(hash),
  guardrail_ids: (id) => guardrailName(id),
  content_filter_builtins: (b) =>
    `${verb(b.action)} ${b.slug}${b.scan_scope ? ` (${scopeWords(b.scan_scope)})` : ""}`,
  content_filters: (f) => `${verb(f.action)} /${f.pattern}/${f.label ? ` as ${f.label}` : ""}`,
};

/** What a filter does to a match: "blocks", "redacts", "flags". */
function verb(action) {
  return { block: "blocks", redact: "redacts", flag: "flags" }[action] ?? String(action);
}

function scopeWords(scope) {
  return { user_only: "user messages only", all: "all messages" }[scope] ?? scope;
}

/** One value of a changed field, for people: money, dates, and names for ids and hashes. */
function value(field, v) {
  if (v === null || v === undefined || v === "") return "none";
  if (typeof v === "number" && MONEY.test(field)) return money(v);
  if (typeof v === "string" && TIME.test(field)) return dateTime(v);
  if (field === "workspace_id") return workspaceName(v);
  if (field === "guardrail_id" || field === "default_guardrail_id") return guardrailName(v);
  if (field === "key_hash") return keyName(v);
  if (Array.isArray(v) && v.length > 0 && WORDS[field]) return v.map(WORDS[field]).join(", ");
  if (Array.isArray(v)) {
    if (v.length === 0) return "none";
    return v.map((x) => (typeof x === "object" ? JSON.stringify(x) : String(x))).join(", ");
  }
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/**
 * "name: a → b; limit: $1.00 → $5.00"; a field that a create set reads as "name: ci-bot", one a
 * delete removed as "name: ci-bot → none".
 */
export function changeSummary(changes) {
  const parts = Object.entries(changes ?? {}).map(([field, c]) => {
    const before = c?.before ?? null;
    if (before === null) return `${field}: ${value(field, c?.after)}`;
    return `${field}: ${value(field, before)} → ${value(field, c?.after)}`;
  });
  return parts.length > 0 ? parts.join("; ") : "—";
}

export function actorName(actor) {
  if (!actor) return "—";
  // The key's name now if the console knows it, else the name (or label) it had then.
  if (actor.key_hash && allKeys().some((k) => k.hash === actor.key_hash)) {
    return keyName(actor.key_hash);
  }
  return actor.name || actor.label || keyName(actor.key_hash);
}

/** What was acted on, by name: the event's own label, else the name the console knows. */
export function resourceName(resource) {
  if (!resource) return "—";
  const known =
    resource.type === "key"
      ? keyName(resource.id)
      : resource.type === "guardrail"
        ? guardrailName(resource.id)
        : resource.type === "workspace" || resource.type === "credits"
          ? workspaceName(resource.id)
          : undefined;
  return `${resource.type} ${resource.label || known || resource.id}`;
}

/** Each filter's name in the URL and its field in the form. */
const FILTERS = {
  type: "audit-type",
  action: "audit-action",
  actor: "audit-actor",
  from: "audit-from",
  to: "audit-to",
};

function filterParams() {
  return Object.fromEntries(
    Object.entries(FILTERS).map(([name, id]) => [name, $(id).value.trim()]),
  );
}

const paging = cursorPaging(
  (cursor) => {
    const f = filterParams();
    return call(
      "GET",
      `/audit-log${query({
        limit: 25,
        cursor,
        resource_type: f.type,
        action: f.action,
        actor: f.actor,
        from: fromLocalInput(f.from),
        to: fromLocalInput(f.to),
      })}`,
    );
  },
  (message) => {
    $("audit-error").textContent = message;
  },
  ({ cursor, page }) =>
    setViewParams({ ...filterParams(), cursor, page: page > 1 ? page : undefined }),
);

const table = dataTable({
  caption: "Audit events",
  id: "audit-table",
  server: paging.pager,
  sort: { key: "at", dir: -1 },
  columns: [
    { key: "at", label: "When", text: (e) => dateTime(e.at), sort: (e) => e.at },
    { key: "actor", label: "Who", text: (e) => actorName(e.actor), className: "wrap" },
    { key: "action", label: "Action", text: (e) => e.action, className: "mono" },
    { key: "resource", label: "What", text: (e) => resourceName(e.resource) },
    { key: "workspace", label: "Workspace", text: (e) => workspaceName(e.workspace_id) },
    {
      key: "changes",
      label: "Changes",
      text: (e) => changeSummary(e.changes),
      className: "changes",
    },
    {
      key: "request",
      label: "Request id",
      text: (e) => e.request_id ?? "—",
      className: "mono clip",
    },
  ],
});
paging.attach(table);

export function refreshAudit() {
  if (!$("audit-list").contains(table.element)) show("audit-list", table.element);
  const params = viewParams("audit");
  for (const [name, id] of Object.entries(FILTERS)) $(id).value = params[name] ?? "";
  return paging.openAt(params.cursor, params.page);
}

export function fillActorChoices() {
  options(
    $("audit-actor"),
    [{ hash: "", name: "anyone" }, ...allKeys().filter((k) => k.kind === "management")],
    (k) => k.hash,
    (k) => k.name,
  );
}

export function setupAudit() {
  $("audit-form").addEventListener("submit", (event) => {
    event.preventDefault();
    setViewParams(filterParams());
    refreshAudit();
  });
}
