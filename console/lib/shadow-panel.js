// A shadow beside a what-if (of a guardrail or a guardrail policy): the what-if form's change
// started as a shadow (decided on live requests without effect), its report read as sentences,
// promoted or ended here. A workspace-wide policy's report adds up the workspaces it names.

import { call } from "./api.js";
import { $, el, facts, show } from "./dom.js";
import { dateTime, fromLocalInput, number, toLocalInput } from "./format.js";
import { workspaceName } from "./names.js";
import { recordLinks } from "./record-links.js";

const WEEK_MS = 7 * 86_400_000;

/** "1 request", "3 requests". */
function requests(n) {
  return `${number(n)} ${n === 1 ? "request" : "requests"}`;
}

/** One difference in words: "2 requests allowed live would have been redacted". */
function differenceText(c) {
  return `${requests(c.count)} ${c.live} live would have been ${c.shadow}`;
}

/**
 * The report in words: what the shadow decided differently, then what its budget would have.
 * `live` names what it runs beside: "the live guardrail".
 */
function shadowSentences(s, live) {
  const since = `Since ${dateTime(s.started_at)}`;
  const decided =
    s.outcomes_changed === 0
      ? `${since}, the shadow decided every request as ${live} did.`
      : `${since}, the shadow decided ${requests(s.outcomes_changed)} differently: ${s.changes.map(differenceText).join("; ")}.`;
  const b = s.budget;
  const budget =
    b.outcomes_changed === 0
      ? "Its budget, replayed over the records, changes no outcome."
      : `Its budget, replayed over the records, changes ${requests(b.outcomes_changed)}: ${b.changes.map(differenceText).join("; ")}.`;
  return [decided, budget];
}

/**
 * A shadow panel on the elements `${prefix}-report`, `-start-form`, `-expires`, `-start`,
 * `-actions`, `-refresh`, `-promote`, `-end`, `-error` and `-result`. `path(target)` is the
 * shadow's API path; `read(target)` answers the shadow's report, or undefined when none runs;
 * `kind` names the target in sentences ("guardrail", "policy").
 */
export function shadowPanel({ prefix, path, read, kind }) {
  const id = (part) => $(`${prefix}-${part}`);
  /** The target whose shadow is shown. */
  let shown;
  /** Called with the target a promote changed. */
  let onPromote;

  function showReport(s) {
    id("actions").hidden = false;
    id("start-form").hidden = !s.expired;
    const [decided, budget] = shadowSentences(s, `the live ${kind}`);
    const ends = s.expired ? `Expired ${dateTime(s.expires_at)}` : dateTime(s.expires_at);
    // A workspace-wide policy's samples may be of any workspace it covers: one opens that one.
    const ws = shown?.workspace_id ?? (s.workspace_ids?.length === 1 ? s.workspace_ids[0] : "");
    // A start answers none: the workspaces are counted when the report is read.
    const covered = s.workspace_ids?.length
      ? [["Workspaces counted", s.workspace_ids.map(workspaceName).join(", ")]]
      : [];
    show(
      `${prefix}-report`,
      el(
        "div",
        {},
        el("p", { id: `${prefix}-sentence`, className: "lead" }, decided),
        el("p", { id: `${prefix}-budget-sentence` }, budget),
        facts([
          ["Change", el("code", {}, JSON.stringify(s.change))],
          ["Started", dateTime(s.started_at)],
          [s.expired ? "Expired" : "Runs until", ends],
          ...covered,
        ]),
        el("h5", {}, "Requests decided differently (a sample)"),
        recordLinks(s.affected_generation_ids, "Shadow's affected requests", ws, "None."),
        el("h5", {}, "Requests its budget decides differently (a sample)"),
        recordLinks(
          s.budget.affected_generation_ids,
          "Shadow's budget-affected requests",
          ws,
          "None.",
        ),
      ),
    );
  }

  function showNone(t) {
    id("actions").hidden = true;
    id("start-form").hidden = false;
    show(`${prefix}-report`, el("p", {}, `No shadow runs on ${t.name}.`));
  }

  async function refresh() {
    const t = shown;
    if (!t) return;
    try {
      const s = await read(t);
      if (shown?.id !== t.id) return;
      if (s) showReport(s);
      else showNone(t);
    } catch (err) {
      id("error").textContent = err.message;
    }
  }

  async function start(proposedChange) {
    const t = shown;
    id("error").textContent = "";
    id("result").textContent = "";
    try {
      const expires = fromLocalInput(id("expires").value);
      if (!expires)
        throw new Error("Runs until: choose when the shadow ends (at most 30 days ahead).");
      const res = await call("POST", path(t), { change: proposedChange(), expires_at: expires });
      id("result").textContent = `Shadow started on ${t.name}.`;
      showReport(res.data);
    } catch (err) {
      id("error").textContent = err.message;
    }
  }

  /** Applies the change as an edit; when its checks fail, says which and offers to force it. */
  async function promote(force = false) {
    const t = shown;
    if (
      !force &&
      !window.confirm(`Promote the shadow of ${t.name}? Its change becomes the ${kind}'s.`)
    )
      return;
    id("error").textContent = "";
    try {
      const res = await call("POST", `${path(t)}/promote`, force ? { force: true } : {});
      id("result").textContent =
        `Shadow promoted: ${t.name} has its change${force ? " (forced)" : ""}.`;
      showNone(t);
      onPromote?.(res.data);
    } catch (err) {
      id("error").textContent = err.message;
      if (!force && err.status === 409 && window.confirm(`${err.message}\n\nPromote anyway?`))
        await promote(true);
    }
  }

  async function end() {
    const t = shown;
    if (!window.confirm(`End the shadow of ${t.name}? Its change is discarded.`)) return;
    id("error").textContent = "";
    try {
      await call("DELETE", path(t));
      id("result").textContent = `Shadow of ${t.name} ended; its change was discarded.`;
      showNone(t);
    } catch (err) {
      id("error").textContent = err.message;
    }
  }

  return {
    /** Shows `t`'s shadow (as the API answered `t`). */
    show(t) {
      if (shown?.id !== t.id) {
        id("report").replaceChildren();
        id("result").textContent = "";
        id("expires").value = toLocalInput(new Date(Date.now() + WEEK_MS).toISOString());
      }
      shown = t;
      id("error").textContent = "";
      return refresh();
    },
    /** `proposedChange` reads the what-if form's change (throws a message naming the problem). */
    setup(proposedChange, promoted) {
      onPromote = promoted;
      id("start").addEventListener("click", () => start(proposedChange));
      id("refresh").addEventListener("click", refresh);
      id("promote").addEventListener("click", () => promote());
      id("end").addEventListener("click", end);
    },
  };
}
