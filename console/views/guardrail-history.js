// A guardrail's history and checks: each version with what it changed (a diff of its fields),
// a restore button per version, and the guardrail's checks with their last result and a button
// that runs them now.

import { call } from "../lib/api.js";
import { $, button, el, show } from "../lib/dom.js";
import { dateTime } from "../lib/format.js";
import { dataTable } from "../lib/table.js";

/** The guardrail whose history is on show. */
let shown;

/** A field's value as one line: lists joined, objects as JSON, unset as "—". */
function valueText(v) {
  if (v === null || v === undefined) return "—";
  if (Array.isArray(v))
    return v.map((x) => (typeof x === "object" ? JSON.stringify(x) : String(x))).join(", ") || "[]";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/** What a version changed, one row per field: before and after. */
function diff(changes) {
  const names = Object.keys(changes ?? {});
  if (names.length === 0) return el("p", {}, "No field changed.");
  return el(
    "table",
    { className: "diff" },
    el("caption", {}, "Fields changed"),
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        el("th", { scope: "col" }, "Field"),
        el("th", { scope: "col" }, "Before"),
        el("th", { scope: "col" }, "After"),
      ),
    ),
    el(
      "tbody",
      {},
      ...names.map((name) =>
        el(
          "tr",
          {},
          el("th", { scope: "row" }, name),
          el("td", { className: "before" }, valueText(changes[name].before)),
          el("td", { className: "after" }, valueText(changes[name].after)),
        ),
      ),
    ),
  );
}

function actionText(v) {
  const what = v.action.replace("guardrail.", "");
  const restored = v.restored_from === null ? "" : ` of version ${v.restored_from}`;
  return `${what}${restored}${v.forced ? " (forced)" : ""}`;
}

const versionsTable = dataTable({
  caption: "Versions, newest first",
  id: "guardrail-versions",
  pageSize: 10,
  sort: { key: "version", dir: -1 },
  columns: [
    { key: "version", label: "Version", text: (v) => String(v.version), sort: (v) => v.version },
    { key: "when", label: "When", text: (v) => dateTime(v.created_at), sort: (v) => v.created_at },
    { key: "who", label: "Who", text: (v) => v.actor.name || v.actor.label },
    { key: "action", label: "Change", text: actionText },
  ],
  actions: (v) => [
    button("Diff", `Diff of version ${v.version}`, () => showDiff(v)),
    button("Restore", `Restore version ${v.version}`, () => restore(v.version)),
  ],
});

const checksTable = dataTable({
  caption: "Checks",
  id: "guardrail-checks",
  pageSize: 50,
  columns: [
    { key: "name", label: "Check", text: (c) => c.name },
    { key: "model", label: "Model", text: (c) => c.request.model },
    { key: "expect", label: "Expects", text: (c) => c.expect },
    { key: "outcome", label: "Last outcome", text: (c) => c.result?.outcome ?? "not run" },
    {
      key: "passed",
      label: "Result",
      text: (c) => (c.result === undefined ? "—" : c.result.passed ? "passed" : "failed"),
    },
    { key: "reason", label: "Why", text: (c) => c.result?.reason || "—" },
  ],
});

function showDiff(v) {
  $("history-diff-h").textContent =
    `Version ${v.version}: ${actionText(v)} by ${v.actor.name || v.actor.label}, ${dateTime(v.created_at)}`;
  show("history-diff", diff(v.changes));
  $("history-diff-card").hidden = false;
}

/** Restores a version; when its checks fail, says which and offers to force it. */
async function restore(n, force = false) {
  const g = shown;
  if (
    !force &&
    !window.confirm(`Restore version ${n} of ${g.name}? This makes a new version equal to it.`)
  )
    return;
  try {
    const res = await call(
      "POST",
      `/guardrails/${encodeURIComponent(g.id)}/versions/${n}/restore`,
      force ? { force: true } : {},
    );
    $("history-result").textContent = `Version ${n} restored${force ? " (forced)" : ""}.`;
    await showHistory(res.data);
  } catch (err) {
    $("history-result").textContent = err.message;
    if (
      !force &&
      err.message.startsWith("409:") &&
      window.confirm(`${err.message}\n\nRestore anyway?`)
    )
      await restore(n, true);
  }
}

async function runChecks() {
  const g = shown;
  try {
    const res = await call("POST", `/guardrails/${encodeURIComponent(g.id)}/checks/run`);
    $("history-result").textContent = res.data.passed
      ? "Every check passed."
      : "Some checks failed.";
    await showHistory({ ...g, last_check_run: res.data });
  } catch (err) {
    $("history-result").textContent = err.message;
  }
}

/** Shows the history and checks of guardrail `g` (as the API answered it). */
export async function showHistory(g) {
  try {
    const versions = await call(
      "GET",
      `/guardrails/${encodeURIComponent(g.id)}/versions?limit=100`,
    );
    shown = g;
    $("history-h").textContent = `History and checks of ${g.name}`;
    versionsTable.setRows(versions.data);
    show("history-versions", versionsTable.element);
    const results = new Map((g.last_check_run?.results ?? []).map((r) => [r.name, r]));
    checksTable.setRows((g.checks ?? []).map((c) => ({ ...c, result: results.get(c.name) })));
    show(
      "history-checks",
      g.checks ? checksTable.element : el("p", {}, "This guardrail has no checks."),
    );
    const run = g.last_check_run;
    $("history-last-run").textContent = run
      ? `Last run ${dateTime(run.ran_at)}: ${run.passed ? "passed" : "failed"}${run.forced ? ", change forced" : ""}.`
      : "The checks have not run yet.";
    $("history-diff-card").hidden = true;
    $("history").hidden = false;
  } catch (err) {
    $("history-result").textContent = err.message;
    $("history").hidden = false;
  }
}

export function hideHistory() {
  shown = undefined;
  $("history").hidden = true;
}

export function setupHistory() {
  $("history-run-checks").addEventListener("click", runChecks);
}
