// The request log: every generation, newest first, filtered by key, model, provider, status,
// guardrail outcome (and which guardrail decided it) and time range; paged by the API's cursor;
// one request's details (cost, timings, guardrail outcomes, trace) on demand.

import { call, query } from "../lib/api.js";
import { cursorPaging } from "../lib/cursor.js";
import { $, button, el, facts, options, show } from "../lib/dom.js";
import {
  bytes,
  fromLocalInput,
  milliseconds,
  money,
  number,
  preciseTime,
  seconds,
} from "../lib/format.js";
import {
  allGuardrails,
  allKeys,
  guardrailName,
  keyName,
  knowsGuardrails,
  loadAllGuardrails,
  workspaceName,
} from "../lib/names.js";
import { REFUSAL_REASONS, refusalWords } from "../lib/refusals.js";
import { dataTable, scrollBox } from "../lib/table.js";
import { setViewParams, viewParams } from "../lib/url-state.js";

/** "email redacted ×2 (Team policy), refused by Team policy": what the guardrails did. */
function outcomes(g) {
  const parts = (g.guardrail_outcomes ?? []).map((o) => {
    const times = o.count > 1 ? ` ×${o.count}` : "";
    const by = o.guardrail_id ? ` (${guardrailName(o.guardrail_id)})` : "";
    return `${o.slug} ${pastTense(o.action)}${times}${by}`;
  });
  if (g.status === "refused" && g.guardrail_id) {
    parts.push(`refused by ${guardrailName(g.guardrail_id)}`);
  }
  return parts.length > 0 ? parts.join(", ") : "none";
}

/** A refused request (or one the store was down for) never reached a provider: no timings or audio. */
function produced(g) {
  return g.status !== "refused" && g.status !== "unavailable";
}

function pastTense(action) {
  return { block: "blocked", redact: "redacted", flag: "flagged" }[action] ?? action;
}

function badge(text) {
  return el("span", { className: `badge ${text}` }, text);
}

/**
 * A page naming a guardrail made since the lists were read (one list per workspace: not read
 * on every visit): the lists are read again before the page is shown, so it shows names.
 */
async function nameGuardrails(page) {
  const ids = page.data.flatMap((g) => [
    g.guardrail_id,
    ...(g.guardrail_outcomes ?? []).map((o) => o.guardrail_id),
  ]);
  if (!knowsGuardrails(ids.filter(Boolean))) {
    await loadAllGuardrails();
    fillLogChoices();
  }
  return page;
}

/** Each filter's name in the URL and its field in the form. */
const FILTERS = {
  q: "log-q",
  key: "log-key",
  workspace: "log-workspace",
  model: "log-model",
  provider: "log-provider",
  status: "log-status",
  outcome: "log-outcome",
  guardrail: "log-guardrail",
  refusal: "log-refusal",
  from: "log-from",
  to: "log-to",
};

function filterParams() {
  return Object.fromEntries(
    Object.entries(FILTERS).map(([name, id]) => [name, $(id).value.trim()]),
  );
}

/** The form as the URL has it; the workspace, when the URL has none, stays the one remembered. */
function formFromParams(params) {
  for (const [name, id] of Object.entries(FILTERS)) {
    if (name === "workspace" && !(name in params)) continue;
    $(id).value = params[name] ?? "";
  }
}

const paging = cursorPaging(
  (cursor) => {
    const f = filterParams();
    return call(
      "GET",
      `/generations${query({
        limit: 25,
        cursor,
        q: serverSearch ? f.q : undefined,
        key_hash: f.key,
        workspace_id: f.workspace,
        model: f.model,
        provider: f.provider,
        status: f.status,
        outcome: f.outcome,
        guardrail_id: f.guardrail,
        refusal_reason: f.refusal,
        from: fromLocalInput(f.from),
        to: fromLocalInput(f.to),
      })}`,
    ).then(nameGuardrails);
  },
  (message) => {
    $("logs-error").textContent = message;
  },
  ({ cursor, page }) =>
    setViewParams({ ...filterParams(), cursor, page: page > 1 ? page : undefined }),
);

/** Whether the API searches the log itself (a `q` parameter): the console then offers it. */
let serverSearch = false;

export function enableLogSearch(openapi) {
  const params = openapi.paths["/api/v1/generations"]?.get?.parameters ?? [];
  serverSearch = params.some((p) => p.in === "query" && p.name === "q");
  $("log-q-field").hidden = !serverSearch;
}

const table = dataTable({
  caption: "Requests",
  id: "logs-table",
  server: paging.pager,
  sort: { key: "at", dir: -1 },
  columns: [
    { key: "at", label: "When", text: (g) => preciseTime(g.created_at), sort: (g) => g.created_at },
    { key: "key", label: "Key", text: (g) => keyName(g.key_hash) },
    { key: "model", label: "Model", text: (g) => g.model, className: "mono" },
    { key: "status", label: "Status", text: (g) => g.status, cell: (g) => badge(g.status) },
    {
      key: "cost",
      label: "Cost",
      text: (g) => money(g.cost_usd),
      sort: (g) => g.cost_usd,
      numeric: true,
    },
    { key: "guardrails", label: "Guardrails", text: outcomes, className: "changes" },
    { key: "provider", label: "Provider", text: (g) => g.provider, secondary: true },
    {
      key: "ttfb",
      label: "First byte",
      text: (g) => (produced(g) ? milliseconds(g.time_to_first_byte_ms) : "—"),
      sort: (g) => g.time_to_first_byte_ms,
      numeric: true,
      secondary: true,
    },
    {
      key: "audio",
      label: "Audio",
      text: (g) => (produced(g) ? seconds(g.duration_seconds) : "—"),
      sort: (g) => g.duration_seconds,
      numeric: true,
      secondary: true,
    },
  ],
  actions: (g) => [
    button("Details", `Details of the request at ${preciseTime(g.created_at)}`, () =>
      showDetail(g),
    ),
  ],
});
paging.attach(table);

/**
 * The refusal in words with its figures, as the API words it ("Daily budget of guardrail
 * support-daily used up: $0.00839 of $0.01 spent (this API key); ...").
 */
function refusalSentence(g) {
  if (!g.refusal_reason) return "—";
  return g.refusal_summary ?? refusalWords(g.refusal_reason);
}

/** The content filters' outcomes: a refusal by any other rule is the Request section's. */
function outcomeTable(g) {
  const list = g.guardrail_outcomes ?? [];
  if (list.length === 0)
    return el(
      "p",
      {},
      g.refusal_reason
        ? "No content filter acted on this request (its refusal is under Request)."
        : "No content filter acted on this request.",
    );
  const t = el("table", { className: "compact" });
  t.createCaption().textContent = "Guardrail outcomes";
  const scroll = scrollBox(t, "Guardrail outcomes table");
  const head = t.createTHead().insertRow();
  for (const h of ["Guardrail", "Filter", "Action", "Label", "Matches"])
    head.append(el("th", { scope: "col" }, h));
  const body = t.createTBody();
  for (const o of list) {
    const tr = body.insertRow();
    for (const v of [
      o.guardrail_id ? guardrailName(o.guardrail_id) : "—",
      o.slug,
      pastTense(o.action),
      o.label || "—",
      number(o.count),
    ]) {
      tr.insertCell().textContent = v;
    }
  }
  return scroll;
}

function traceView(trace) {
  if (!trace || Object.keys(trace).length === 0)
    return el("p", {}, "No trace sent with this request.");
  return facts(
    Object.entries(trace).map(([k, v]) => [
      k,
      typeof v === "object" ? JSON.stringify(v) : String(v),
    ]),
  );
}

function showDetail(g) {
  $("log-detail-h").textContent = `Request ${g.id}`;
  show(
    "log-detail-body",
    el(
      "div",
      { className: "detail-grid" },
      el(
        "section",
        { "aria-label": "Request" },
        el("h4", {}, "Request"),
        facts([
          ["When", preciseTime(g.created_at)],
          ["Key", keyName(g.key_hash)],
          ["Workspace", workspaceName(g.workspace_id)],
          ["Model", g.model],
          ["Provider", g.provider],
          ["Voice", g.voice || "—"],
          ["Format", g.response_format],
          ["Status", g.status],
          ["Refused because", refusalSentence(g)],
          ["Deciding guardrail", g.guardrail_id ? guardrailName(g.guardrail_id) : "—"],
          ["Region", g.data_region ?? "—"],
          ["User", g.user ?? "—"],
          ["Session", g.session_id ?? "—"],
        ]),
      ),
      el(
        "section",
        { "aria-label": "Cost and timings" },
        el("h4", {}, "Cost and timings"),
        facts([
          ["Cost", money(g.cost_usd)],
          ["Own provider key (BYOK)", g.is_byok ? "yes" : "no"],
          ["Characters", number(g.characters)],
          ["Time to first byte", produced(g) ? milliseconds(g.time_to_first_byte_ms) : "—"],
          ["Audio length", produced(g) ? seconds(g.duration_seconds) : "—"],
          ["Audio size", produced(g) ? bytes(g.bytes) : "—"],
        ]),
      ),
      el(
        "section",
        { "aria-label": "Guardrail outcomes" },
        el("h4", {}, "Content filter outcomes"),
        outcomeTable(g),
      ),
      el("section", { "aria-label": "Trace" }, el("h4", {}, "Trace"), traceView(g.trace)),
    ),
  );
  $("log-detail").hidden = false;
  $("log-detail").focus();
}

export function refreshLogs() {
  if (!$("logs-list").contains(table.element)) show("logs-list", table.element);
  const params = viewParams("logs");
  formFromParams(params);
  return paging.openAt(params.cursor, params.page);
}

/** Filter choices by name: keys and guardrails from their lists, models from the catalogue. */
export function fillLogChoices() {
  options(
    $("log-key"),
    [{ hash: "", name: "any key" }, ...allKeys()],
    (k) => k.hash,
    (k) => k.name,
  );
  options(
    $("log-guardrail"),
    [{ id: "", name: "any guardrail" }, ...allGuardrails()],
    (g) => g.id,
    (g) => g.name,
  );
}

function fillRefusalChoices() {
  options(
    $("log-refusal"),
    [["", "any reason"], ...REFUSAL_REASONS],
    ([value]) => value,
    ([, words]) => words,
  );
}

export function fillModelChoices(models) {
  options(
    $("log-models"),
    models,
    (m) => m.id,
    (m) => m.name || m.id,
  );
}

export function setupLogs() {
  fillRefusalChoices();
  $("logs-form").addEventListener("submit", (event) => {
    event.preventDefault();
    $("log-detail").hidden = true;
    setViewParams(filterParams());
    refreshLogs();
  });
  $("log-clear").addEventListener("click", () => {
    $("logs-form").reset();
    $("log-workspace").dispatchEvent(new Event("change"));
    setViewParams({});
    refreshLogs();
  });
  $("log-detail-close").addEventListener("click", () => {
    $("log-detail").hidden = true;
  });
}
