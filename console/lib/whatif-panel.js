// A what-if (of a guardrail or a guardrail policy): a proposed change (the edit form's, or the
// JSON its edit takes) replayed over the recorded requests of a window. The answer is read as a
// sentence first, then the spend that would move, the rules the replay could not decide, and the
// affected records; the shadow beside it starts from the same change.

import { call } from "./api.js";
import { $, el, facts, show } from "./dom.js";
import { dateTime, fromLocalInput, money, number, toLocalInput } from "./format.js";
import { allKeys, keyName, loadKeys } from "./names.js";
import { recordLinks } from "./record-links.js";
import { dataTable } from "./table.js";

const WEEK_MS = 7 * 86_400_000;

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

/**
 * The answer in words. The API counts refusals by reason, not by key; a key is named only when it
 * is the one key whose spend falls, since every newly refused priced request lowers its key's.
 */
function whatIfSentence(a) {
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

function notReplayed(a) {
  if (a.not_replayed.length === 0) return el("p", {}, "Every rule of the change was replayed.");
  return el(
    "ul",
    { "aria-label": "Rules not replayed" },
    ...a.not_replayed.map((u) => el("li", {}, el("code", {}, u.field), `: ${u.reason}`)),
  );
}

function spendTable(id) {
  return dataTable({
    caption: "Spend that would move",
    id,
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
}

/**
 * A what-if panel on the elements `${prefix}`, `-h`, `-form`, `-change`, `-from`, `-to`,
 * `-take-edit`, `-error` and `-answer`. `path(target)` is the target's API path; `takeEdit(target)`
 * answers the edit form's change to it (throws a message saying what to do when there is none);
 * `example` is a change of the right shape, for the message of one that is not an object;
 * `shadow` is the shadow panel beside it.
 */
export function whatIfPanel({ prefix, path, takeEdit, example, shadow }) {
  const id = (part) => $(part ? `${prefix}-${part}` : prefix);
  const spend = spendTable(`${prefix}-spend`);
  /** The target the form replays changes of. */
  let shown;

  function showAnswer(a) {
    spend.setRows(a.spend);
    show(
      `${prefix}-answer`,
      el(
        "div",
        {},
        el("p", { id: `${prefix}-sentence`, className: "lead" }, whatIfSentence(a)),
        el("p", {}, otherChanges(a)),
        facts([
          ["Window", `${dateTime(a.from)} – ${dateTime(a.to)}`],
          ["Requests replayed", number(a.requests_replayed)],
          ["Outcomes changed", number(a.outcomes_changed)],
        ]),
        el("h4", {}, "Newly refused"),
        byReason(a),
        el("h4", {}, "Spend per key and member"),
        a.spend.length > 0 ? spend.element : el("p", {}, "No spend would move."),
        el("h4", {}, "Not replayed"),
        notReplayed(a),
        el("h4", {}, "Affected requests (a sample)"),
        recordLinks(
          a.affected_generation_ids,
          "Affected requests",
          shown?.workspace_id,
          "No record changes outcome.",
        ),
      ),
    );
  }

  /** The change typed as JSON; a message naming the problem when it is not an object. */
  function proposedChange() {
    const text = id("change").value.trim();
    if (!text)
      throw new Error("Proposed change: type the JSON of a change, or take the edit form's.");
    let change;
    try {
      change = JSON.parse(text);
    } catch (err) {
      throw new Error(`Proposed change is not JSON: ${err.message}`);
    }
    if (typeof change !== "object" || change === null || Array.isArray(change))
      throw new Error(`Proposed change must be a JSON object, e.g. ${example}.`);
    return change;
  }

  async function replay(event) {
    event.preventDefault();
    id("error").textContent = "";
    const t = shown;
    try {
      const body = {
        change: proposedChange(),
        from: fromLocalInput(id("from").value) ?? undefined,
        to: fromLocalInput(id("to").value) ?? undefined,
      };
      id("answer").replaceChildren(el("p", {}, "Replaying…"));
      const res = await call("POST", `${path(t)}/simulate`, body);
      // The answer names keys: one made since the list was read gets its name too.
      const known = new Set(allKeys().map((k) => k.hash));
      if (res.data.spend.some((s) => s.entity === "key" && !known.has(s.subject))) await loadKeys();
      showAnswer(res.data);
    } catch (err) {
      id("answer").replaceChildren();
      id("error").textContent = err.message;
    }
  }

  function takeEditForm() {
    id("error").textContent = "";
    try {
      id("change").value = JSON.stringify(takeEdit(shown), null, 2);
    } catch (err) {
      id("error").textContent = err.message;
    }
  }

  return {
    /** Opens the form on `t` (as the API answered it), the last 7 days chosen. */
    show(t) {
      if (shown?.id !== t.id) {
        id("change").value = "";
        id("answer").replaceChildren();
        id("from").value = toLocalInput(new Date(Date.now() - WEEK_MS).toISOString());
        id("to").value = "";
      }
      shown = t;
      id("error").textContent = "";
      id("h").textContent = `What-if on ${t.name}`;
      id().hidden = false;
      id("change").focus();
      void shadow.show(t);
    },
    hide() {
      shown = undefined;
      id().hidden = true;
    },
    shown: () => shown,
    /** `promoted(target)` is called with what a shadow's promote left. */
    setup(promoted) {
      id("form").addEventListener("submit", replay);
      id("take-edit").addEventListener("click", takeEditForm);
      shadow.setup(proposedChange, promoted);
    },
  };
}
