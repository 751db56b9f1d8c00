// A guardrail's what-if: a proposed change (the edit form's changes, or the JSON a PATCH takes)
// replayed over the recorded requests of a window. The answer is read as a sentence first, then
// the spend that would move, the rules the replay could not decide, and the affected records.

import { call } from "../lib/api.js";
import { $, el, facts, show } from "../lib/dom.js";
import { dateTime, fromLocalInput, money, number, toLocalInput } from "../lib/format.js";
import { allKeys, keyName, loadKeys } from "../lib/names.js";
import { dataTable } from "../lib/table.js";
import { editingId, guardrailRequest } from "./guardrail-form.js";
import { setupShadow, showShadow } from "./guardrail-shadow.js";

const WEEK_MS = 7 * 86_400_000;

/** The guardrail the form replays changes of. */
let shown;

const REASONS = {
  budget: "budget",
  model: "a model not allowed",
  provider: "a provider not allowed",
  region: "region",
  zdr: "zero data retention",
  data_policy: "the data policy",
  content: "content",
};

/** "key support-bot"; a key the console has no name for reads as "key 9577e6cc…". */
function keyWords(hash) {
  const name = keyName(hash);
  return allKeys().some((k) => k.hash === hash) ? `key ${name}` : name;
}

const spendTable = dataTable({
  caption: "Spend that would move",
  id: "whatif-spend",
  one: "entity whose spend would move",
  pageSize: 10,
  sort: { key: "moved", dir: 1 },
  columns: [
    {
      key: "who",
      label: "Key or member",
      text: (s) => (s.entity === "key" ? keyWords(s.subject) : `member ${s.subject}`),
    },
    {
      key: "recorded",
      label: "Recorded",
      text: (s) => money(s.recorded_usd),
      sort: (s) => s.recorded_usd,
      numeric: true,
    },
    {
      key: "replayed",
      label: "Under the change",
      text: (s) => money(s.replayed_usd),
      sort: (s) => s.replayed_usd,
      numeric: true,
    },
    {
      key: "moved",
      label: "Moves by",
      text: (s) => money(s.replayed_usd - s.recorded_usd),
      sort: (s) => s.replayed_usd - s.recorded_usd,
      numeric: true,
    },
  ],
});

/**
 * The answer in words. The API counts refusals by reason, not by key; a key is named only when it
 * is the one key whose spend falls, since every newly refused priced request lowers its key's.
 */
export function whatIfSentence(a) {
  const refused = a.newly_refused.reduce((n, r) => n + r.count, 0);
  const requests = `${number(a.requests_replayed)} requests in the window`;
  if (refused === 0) return `This change would have refused none of the ${requests}.`;
  const of = `${number(refused)} of ${requests}`;
  const top = [...a.newly_refused].sort((x, y) => y.count - x.count)[0];
  const fell = a.spend.filter((s) => s.entity === "key" && s.replayed_usd < s.recorded_usd);
  const where =
    fell.length === 1
      ? ` on ${keyWords(fell[0].subject)}`
      : fell.length > 1
        ? ` (spend falls on ${number(fell.length)} keys)`
        : "";
  const why = REASONS[top.reason] ?? top.reason;
  return `This change would have refused ${of}, ${number(top.count)} of them for ${why}${where}.`;
}

/** The other outcomes that change: allowed, redacted, flagged. */
function otherChanges(a) {
  const parts = [
    [a.newly_allowed, "newly allowed"],
    [a.newly_redacted, "newly redacted"],
    [a.newly_flagged, "newly flagged"],
  ].filter(([n]) => n > 0);
  if (parts.length === 0) return "No request would be newly allowed, redacted or flagged.";
  return `${parts.map(([n, w]) => `${number(n)} ${n === 1 ? "request" : "requests"} ${w}`).join(", ")}.`;
}

function byReason(a) {
  if (a.newly_refused.length === 0) return el("p", {}, "No request newly refused.");
  return el(
    "ul",
    { "aria-label": "Newly refused by reason" },
    ...a.newly_refused.map((r) =>
      el("li", {}, `${REASONS[r.reason] ?? r.reason}: ${number(r.count)}`),
    ),
  );
}

/** Each sample id opens the request log on that record. */
function samples(a, workspaceId) {
  if (a.affected_generation_ids.length === 0) return el("p", {}, "No record changes outcome.");
  const link = (id) => {
    const q = new URLSearchParams({ q: id, workspace: workspaceId ?? "" });
    return el("li", {}, el("a", { href: `#logs?${q}`, className: "mono" }, id));
  };
  return el("ul", { "aria-label": "Affected requests" }, ...a.affected_generation_ids.map(link));
}

function notReplayed(a) {
  if (a.not_replayed.length === 0) return el("p", {}, "Every rule of the change was replayed.");
  return el(
    "ul",
    { "aria-label": "Rules not replayed" },
    ...a.not_replayed.map((u) => el("li", {}, el("code", {}, u.field), `: ${u.reason}`)),
  );
}

function showAnswer(a) {
  spendTable.setRows(a.spend);
  show(
    "whatif-answer",
    el(
      "div",
      {},
      el("p", { id: "whatif-sentence", className: "lead" }, whatIfSentence(a)),
      el("p", {}, otherChanges(a)),
      facts([
        ["Window", `${dateTime(a.from)} – ${dateTime(a.to)}`],
        ["Requests replayed", number(a.requests_replayed)],
        ["Outcomes changed", number(a.outcomes_changed)],
      ]),
      el("h4", {}, "Newly refused"),
      byReason(a),
      el("h4", {}, "Spend per key and member"),
      a.spend.length > 0 ? spendTable.element : el("p", {}, "No spend would move."),
      el("h4", {}, "Not replayed"),
      notReplayed(a),
      el("h4", {}, "Affected requests (a sample)"),
      samples(a, shown?.workspace_id),
    ),
  );
}

/** The change typed as JSON; a message naming the problem when it is not an object. */
function proposedChange() {
  const text = $("whatif-change").value.trim();
  if (!text)
    throw new Error("Proposed change: type the JSON of a change, or take the edit form's.");
  let change;
  try {
    change = JSON.parse(text);
  } catch (err) {
    throw new Error(`Proposed change is not JSON: ${err.message}`);
  }
  if (typeof change !== "object" || change === null || Array.isArray(change))
    throw new Error('Proposed change must be a JSON object, e.g. {"limit_usd": 5}.');
  return change;
}

async function replay(event) {
  event.preventDefault();
  $("whatif-error").textContent = "";
  const g = shown;
  try {
    const body = {
      change: proposedChange(),
      from: fromLocalInput($("whatif-from").value) ?? undefined,
      to: fromLocalInput($("whatif-to").value) ?? undefined,
    };
    $("whatif-answer").replaceChildren(el("p", {}, "Replaying…"));
    const res = await call("POST", `/guardrails/${encodeURIComponent(g.id)}/simulate`, body);
    // The answer names keys: one made since the list was read gets its name too.
    const known = new Set(allKeys().map((k) => k.hash));
    if (res.data.spend.some((s) => s.entity === "key" && !known.has(s.subject))) await loadKeys();
    showAnswer(res.data);
  } catch (err) {
    $("whatif-answer").replaceChildren();
    $("whatif-error").textContent = err.message;
  }
}

/** The changes made in the edit form to this guardrail, as the JSON the replay takes. */
function takeEditForm() {
  $("whatif-error").textContent = "";
  if (editingId() !== shown?.id) {
    $("whatif-error").textContent =
      `The edit form is not on ${shown?.name}: choose Edit on it, change fields, then take them.`;
    return;
  }
  const change = guardrailRequest();
  if (Object.keys(change).length === 0) {
    $("whatif-error").textContent = "The edit form has no change yet: edit a field first.";
    return;
  }
  $("whatif-change").value = JSON.stringify(change, null, 2);
}

/** Opens the what-if form on guardrail `g` (as the API answered it), the last 7 days chosen. */
export function showWhatIf(g) {
  if (shown?.id !== g.id) {
    $("whatif-change").value = "";
    $("whatif-answer").replaceChildren();
    const now = Date.now();
    $("whatif-from").value = toLocalInput(new Date(now - WEEK_MS).toISOString());
    $("whatif-to").value = "";
  }
  shown = g;
  $("whatif-error").textContent = "";
  $("whatif-h").textContent = `What-if on ${g.name}`;
  $("whatif").hidden = false;
  $("whatif-change").focus();
  void showShadow(g);
}

export function hideWhatIf() {
  shown = undefined;
  $("whatif").hidden = true;
}

export function setupWhatIf() {
  $("whatif-form").addEventListener("submit", replay);
  $("whatif-take-edit").addEventListener("click", takeEditForm);
  setupShadow(proposedChange);
}
