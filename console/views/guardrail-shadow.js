// A guardrail's shadow beside its what-if: the what-if form's change started as a shadow (decided
// on live requests without effect), its report read as sentences, promoted or ended here.

import { call } from "../lib/api.js";
import { $, el, facts, show } from "../lib/dom.js";
import { dateTime, fromLocalInput, number, toLocalInput } from "../lib/format.js";

const WEEK_MS = 7 * 86_400_000;

/** The guardrail whose shadow is shown. */
let shown;

const path = (g) => `/guardrails/${encodeURIComponent(g.id)}/shadow`;

/** "1 request", "3 requests". */
function requests(n) {
  return `${number(n)} ${n === 1 ? "request" : "requests"}`;
}

/** One difference in words: "2 requests allowed live would have been redacted". */
function differenceText(c) {
  return `${requests(c.count)} ${c.live} live would have been ${c.shadow}`;
}

/** The report in words: what the shadow decided differently, then what its budget would have. */
export function shadowSentences(s) {
  const since = `Since ${dateTime(s.started_at)}`;
  const decided =
    s.outcomes_changed === 0
      ? `${since}, the shadow decided every request as the live guardrail did.`
      : `${since}, the shadow decided ${requests(s.outcomes_changed)} differently: ${s.changes.map(differenceText).join("; ")}.`;
  const b = s.budget;
  const budget =
    b.outcomes_changed === 0
      ? "Its budget, replayed over the records, changes no outcome."
      : `Its budget, replayed over the records, changes ${requests(b.outcomes_changed)}: ${b.changes.map(differenceText).join("; ")}.`;
  return [decided, budget];
}

/** Each sample id opens the request log on that record. */
function samples(ids, label, workspaceId) {
  if (ids.length === 0) return el("p", {}, "None.");
  const link = (id) => {
    const q = new URLSearchParams({ q: id, workspace: workspaceId ?? "" });
    return el("li", {}, el("a", { href: `#logs?${q}`, className: "mono" }, id));
  };
  return el("ul", { "aria-label": label }, ...ids.map(link));
}

function showReport(s) {
  $("shadow-actions").hidden = false;
  $("shadow-start-form").hidden = !s.expired;
  const [decided, budget] = shadowSentences(s);
  const ends = s.expired ? `Expired ${dateTime(s.expires_at)}` : dateTime(s.expires_at);
  show(
    "shadow-report",
    el(
      "div",
      {},
      el("p", { id: "shadow-sentence", className: "lead" }, decided),
      el("p", { id: "shadow-budget-sentence" }, budget),
      facts([
        ["Change", el("code", {}, JSON.stringify(s.change))],
        ["Started", dateTime(s.started_at)],
        [s.expired ? "Expired" : "Runs until", ends],
      ]),
      el("h5", {}, "Requests decided differently (a sample)"),
      samples(s.affected_generation_ids, "Shadow's affected requests", shown?.workspace_id),
      el("h5", {}, "Requests its budget decides differently (a sample)"),
      samples(
        s.budget.affected_generation_ids,
        "Shadow's budget-affected requests",
        shown?.workspace_id,
      ),
    ),
  );
}

function showNone(g) {
  $("shadow-actions").hidden = true;
  $("shadow-start-form").hidden = false;
  show("shadow-report", el("p", {}, `No shadow runs on ${g.name}.`));
}

/**
 * Reads the guardrail's shadow (none: says so, and offers to start one). The guardrail says
 * whether one runs, so no request is answered 404 on the way.
 */
async function refresh() {
  const g = shown;
  if (!g) return;
  try {
    const current = await call("GET", `/guardrails/${encodeURIComponent(g.id)}`);
    if (!current.data.shadow) {
      if (shown?.id === g.id) showNone(g);
      return;
    }
    const res = await call("GET", path(g));
    if (shown?.id === g.id) showReport(res.data);
  } catch (err) {
    $("shadow-error").textContent = err.message;
  }
}

async function start(proposedChange) {
  const g = shown;
  $("shadow-error").textContent = "";
  $("shadow-result").textContent = "";
  try {
    const expires = fromLocalInput($("shadow-expires").value);
    if (!expires)
      throw new Error("Runs until: choose when the shadow ends (at most 30 days ahead).");
    const res = await call("POST", path(g), { change: proposedChange(), expires_at: expires });
    $("shadow-result").textContent = `Shadow started on ${g.name}.`;
    showReport(res.data);
  } catch (err) {
    $("shadow-error").textContent = err.message;
  }
}

/** Applies the change as an edit; when its checks fail, says which and offers to force it. */
async function promote(force = false) {
  const g = shown;
  if (
    !force &&
    !window.confirm(`Promote the shadow of ${g.name}? Its change becomes the guardrail's.`)
  )
    return;
  $("shadow-error").textContent = "";
  try {
    await call("POST", `${path(g)}/promote`, force ? { force: true } : {});
    $("shadow-result").textContent =
      `Shadow promoted: ${g.name} has its change${force ? " (forced)" : ""}.`;
    showNone(g);
  } catch (err) {
    $("shadow-error").textContent = err.message;
    if (
      !force &&
      err.message.startsWith("409:") &&
      window.confirm(`${err.message}\n\nPromote anyway?`)
    )
      await promote(true);
  }
}

async function end() {
  const g = shown;
  if (!window.confirm(`End the shadow of ${g.name}? Its change is discarded.`)) return;
  $("shadow-error").textContent = "";
  try {
    await call("DELETE", path(g));
    $("shadow-result").textContent = `Shadow of ${g.name} ended; its change was discarded.`;
    showNone(g);
  } catch (err) {
    $("shadow-error").textContent = err.message;
  }
}

/** Shows guardrail `g`'s shadow beside its what-if. */
export function showShadow(g) {
  if (shown?.id !== g.id) {
    $("shadow-report").replaceChildren();
    $("shadow-result").textContent = "";
    $("shadow-expires").value = toLocalInput(new Date(Date.now() + WEEK_MS).toISOString());
  }
  shown = g;
  $("shadow-error").textContent = "";
  return refresh();
}

/** `proposedChange` reads the what-if form's change (throws a message naming the problem). */
export function setupShadow(proposedChange) {
  $("shadow-start").addEventListener("click", () => start(proposedChange));
  $("shadow-refresh").addEventListener("click", refresh);
  $("shadow-promote").addEventListener("click", () => promote());
  $("shadow-end").addEventListener("click", end);
}
