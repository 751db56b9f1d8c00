// What governs a key or member, per policy type, and assignment changes that carry the state the
// operator saw, so that a change someone else made meanwhile is refused (409) and said.

import { call } from "../lib/api.js";
import { $, show } from "../lib/dom.js";
import { list } from "../lib/format.js";
import { keyName } from "../lib/names.js";
import { dataTable } from "../lib/table.js";
import {
  base,
  confirmMove,
  policyName,
  TYPE_WORDS,
  TYPES,
  type,
  workspace,
} from "./policy-common.js";

/** The assignment state the operator last saw, per workspace, subject and type: sent as expected. */
const seen = new Map();
const seenKey = (s, t) => `${workspace()}:${s.kind}:${s.id}:${t}`;
/** Reads the policy list again (a change of assignment changes its counts). */
let refreshPolicies = async () => {};

/** The subject the assignment form names: a key's hash or a member's user id. */
function subject() {
  const kind = $("pol-kind").value;
  const id = kind === "api-keys" ? $("pol-key").value : $("pol-member").value.trim();
  const name = kind === "api-keys" ? `key ${keyName(id)}` : `member ${id}`;
  return { kind, id, name };
}

function stateUrl(s, t) {
  const q = new URLSearchParams({ workspace_id: workspace(), policy_type: t });
  return `/guardrails/policies/assignments/${s.kind}/${encodeURIComponent(s.id)}?${q}`;
}

/** An assignment state in words: "budget policy Team cap, directly". */
function stateWords(st) {
  const parts = [];
  if (st.policy_ids.length > 0) parts.push(`assigned ${st.policy_ids.map(policyName).join(", ")}`);
  if (st.workspace_default_policy_ids.length > 0)
    parts.push(
      `inherits the workspace default ${st.workspace_default_policy_ids.map(policyName).join(", ")}`,
    );
  if (st.opted_out) parts.push("opted out of the workspace default");
  return parts.join("; ") || "no policy of this type";
}

/** Whether a workspace-wide policy covers workspace `ws`. */
function covers(p, ws) {
  return p.is_default ? !p.opted_out_workspace_ids.includes(ws) : p.workspace_ids.includes(ws);
}

const governsTable = dataTable({
  caption: "Policies per type",
  id: "pol-governs-table",
  one: "type",
  pageSize: 10,
  sort: { key: "type", dir: 1 },
  columns: [
    { key: "type", label: "Type", text: (r) => TYPE_WORDS[r.t], sort: (r) => TYPES.indexOf(r.t) },
    { key: "direct", label: "Assigned directly", text: (r) => list(r.direct) },
    { key: "inherited", label: "Workspace default inherited", text: (r) => list(r.inherited) },
    { key: "optout", label: "Opted out of the default", text: (r) => (r.opted_out ? "yes" : "no") },
    { key: "account", label: "Workspace-wide (cannot be loosened)", text: (r) => list(r.account) },
  ],
});

/**
 * Reads and shows what governs the subject, per type: its own and inherited policies and the
 * workspace-wide ones over them. What it read is what the next change expects.
 */
async function governance() {
  const s = subject();
  if (!s.id) {
    $("pol-assign-result").textContent = "Choose a key or type a member id first.";
    return;
  }
  const ws = workspace();
  const rows = await Promise.all(
    TYPES.map(async (t) => {
      const [state, mine, account] = await Promise.all([
        call("GET", stateUrl(s, t)),
        call("GET", `${base(t)}?workspace_id=${encodeURIComponent(ws)}`),
        call("GET", `/guardrails/policies/account?policy_type=${t}`),
      ]);
      seen.set(seenKey(s, t), state.data);
      const names = new Map(mine.data.map((p) => [p.id, p.name]));
      const named = (ids) => ids.map((id) => names.get(id) ?? id);
      return {
        t,
        direct: named(state.data.policy_ids),
        inherited: named(state.data.workspace_default_policy_ids),
        opted_out: state.data.opted_out,
        account: account.data.filter((p) => covers(p, ws)).map((p) => p.name),
      };
    }),
  );
  $("pol-governs-h").textContent = `What governs ${s.name}`;
  governsTable.setRows(rows);
  if (!$("pol-governs").contains(governsTable.element)) show("pol-governs", governsTable.element);
  $("pol-governs-card").hidden = false;
}

/** Assigns or removes the chosen policy, expecting the state last shown for the subject. */
async function changeAssignment(event, assigned) {
  event?.preventDefault();
  const s = subject();
  const t = type();
  const policyId = $("pol-assign-policy").value;
  $("pol-assign-result").textContent = "";
  try {
    if (!s.id) throw new Error("Choose a key or type a member id first.");
    if (!confirmMove(t)) return;
    if (!seen.has(seenKey(s, t))) await governance();
    const res = await call(
      "PUT",
      `/guardrails/policies/assignments/${s.kind}/${encodeURIComponent(s.id)}`,
      {
        assigned,
        expected_assignment: seen.get(seenKey(s, t)),
        policy_id: policyId,
        policy_type: t,
        workspace_id: workspace(),
      },
    );
    const what = `${policyName(policyId)} ${assigned ? "assigned to" : "removed from"} ${s.name}`;
    $("pol-assign-result").textContent = res.data
      ? `${what}.`
      : `Nothing to change: ${what} already.`;
    await governance();
    await refreshPolicies();
  } catch (err) {
    if (!err.message.startsWith("409:")) {
      $("pol-assign-result").textContent = err.message;
      return;
    }
    // Someone changed it since it was shown: say what it is now, and expect that next time.
    try {
      const now = (await call("GET", stateUrl(s, t))).data;
      seen.set(seenKey(s, t), now);
      // The policy it now has may be new to this page: read the list again to name it.
      await refreshPolicies();
      $("pol-assign-result").textContent =
        `Not changed: someone else changed the ${TYPE_WORDS[t].toLowerCase()} policy of ${s.name} since it was shown. ` +
        `It now has ${stateWords(now)}. Check it, then try again.`;
      await governance();
    } catch (again) {
      $("pol-assign-result").textContent = `${err.message} (reading it again: ${again.message})`;
    }
  }
}

/** `refresh` reads the policy list again after a change. */
export function setupAssignments(refresh) {
  refreshPolicies = refresh;
  $("pol-kind").addEventListener("change", () => {
    const keys = $("pol-kind").value === "api-keys";
    $("pol-key-field").hidden = !keys;
    $("pol-member-field").hidden = keys;
  });
  $("pol-assign-form").addEventListener("submit", (event) => changeAssignment(event, true));
  $("pol-unassign").addEventListener("click", () => changeAssignment(undefined, false));
  $("pol-show-governs").addEventListener("click", () =>
    governance().catch((err) => {
      $("pol-assign-result").textContent = err.message;
    }),
  );
}

export function resetAssignments() {
  seen.clear();
  governsTable.setRows([]);
  $("pol-governs-card").hidden = true;
}
