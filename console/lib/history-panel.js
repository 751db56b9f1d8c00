// The history and checks of a guardrail or a guardrail policy: each version with what it changed
// (a diff of its fields), a restore button per version (a 409 from failing checks offered as
// "force"), and the checks with their last result and a button that runs them now. Both have the
// same routes under their own path, so one panel serves each, on its own elements.

import { call } from "./api.js";
import { $, button, el, show } from "./dom.js";
import { dateTime } from "./format.js";
import { dataTable } from "./table.js";

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

/** "update (forced)", "restore of version 2": the audit action without its resource's prefix. */
function actionText(v) {
  const what = v.action.replace(/^guardrail(_policy)?\./, "");
  const restored = v.restored_from === null ? "" : ` of version ${v.restored_from}`;
  return `${what}${restored}${v.forced ? " (forced)" : ""}`;
}

/**
 * A history panel on the elements `${prefix}`, `${prefix}-h`, `-versions`, `-diff-card`,
 * `-diff-h`, `-diff`, `-checks`, `-last-run`, `-run-checks` and `-result`. `path(target)` is the
 * target's API path; `tables` names its two tables' ids; `noChecks(target)` says why a target
 * has no checks to run (a budget policy), or nothing when it may have some.
 */
export function historyPanel({ prefix, path, tables, noChecks = () => undefined }) {
  const id = (part) => $(part ? `${prefix}-${part}` : prefix);
  /** The target whose history is on show. */
  let shown;

  const versionsTable = dataTable({
    caption: "Versions, newest first",
    id: tables.versions,
    pageSize: 10,
    sort: { key: "version", dir: -1 },
    columns: [
      { key: "version", label: "Version", text: (v) => String(v.version), sort: (v) => v.version },
      {
        key: "when",
        label: "When",
        text: (v) => dateTime(v.created_at),
        sort: (v) => v.created_at,
      },
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
    id: tables.checks,
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
    id("diff-h").textContent =
      `Version ${v.version}: ${actionText(v)} by ${v.actor.name || v.actor.label}, ${dateTime(v.created_at)}`;
    show(`${prefix}-diff`, diff(v.changes));
    id("diff-card").hidden = false;
  }

  /** Restores a version; when its checks fail, says which and offers to force it. */
  async function restore(n, force = false) {
    const t = shown;
    if (
      !force &&
      !window.confirm(`Restore version ${n} of ${t.name}? This makes a new version equal to it.`)
    )
      return;
    try {
      const res = await call(
        "POST",
        `${path(t)}/versions/${n}/restore`,
        force ? { force: true } : {},
      );
      id("result").textContent = `Version ${n} restored${force ? " (forced)" : ""}.`;
      await showHistory(res.data);
      onChange?.(res.data);
    } catch (err) {
      id("result").textContent = err.message;
      if (!force && err.status === 409 && window.confirm(`${err.message}\n\nRestore anyway?`))
        await restore(n, true);
    }
  }

  async function runChecks() {
    const t = shown;
    try {
      const res = await call("POST", `${path(t)}/checks/run`);
      id("result").textContent = res.data.passed ? "Every check passed." : "Some checks failed.";
      await showHistory({ ...t, last_check_run: res.data });
    } catch (err) {
      id("result").textContent = err.message;
    }
  }

  function showChecks(t) {
    const none = noChecks(t);
    id("run-checks").hidden = none !== undefined;
    if (none !== undefined) {
      show(`${prefix}-checks`, el("p", {}, none));
      id("last-run").textContent = "";
      return;
    }
    const results = new Map((t.last_check_run?.results ?? []).map((r) => [r.name, r]));
    checksTable.setRows((t.checks ?? []).map((c) => ({ ...c, result: results.get(c.name) })));
    show(
      `${prefix}-checks`,
      t.checks?.length ? checksTable.element : el("p", {}, `${t.name} has no checks.`),
    );
    const run = t.last_check_run;
    id("last-run").textContent = run
      ? `Last run ${dateTime(run.ran_at)}: ${run.passed ? "passed" : "failed"}${run.forced ? ", change forced" : ""}.`
      : "The checks have not run yet.";
  }

  /** Shows the history and checks of `t` (as the API answered it). */
  async function showHistory(t) {
    try {
      const versions = await call("GET", `${path(t)}/versions?limit=100`);
      shown = t;
      id("h").textContent = `History and checks of ${t.name}`;
      versionsTable.setRows(versions.data);
      show(`${prefix}-versions`, versionsTable.element);
      showChecks(t);
      id("diff-card").hidden = true;
      id().hidden = false;
    } catch (err) {
      id("result").textContent = err.message;
      id().hidden = false;
    }
  }

  /** Called with the target a restore left (a list showing it reads it again). */
  let onChange;

  return {
    show: showHistory,
    hide() {
      shown = undefined;
      id().hidden = true;
    },
    /** Whose history is on show, if any. */
    shown: () => shown,
    setup(changed) {
      onChange = changed;
      id("run-checks").addEventListener("click", runChecks);
    },
  };
}
