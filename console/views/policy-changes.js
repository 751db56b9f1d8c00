// A policy's history and checks, what-if and shadow (the guardrail's panels, console/lib/, on the
// policy's routes), a workspace policy's or a workspace-wide (account) one's. A mapped policy is
// the view of a guardrail: its history, checks, what-if and shadow are the guardrail's, so the
// panels say so and link to it instead.

import { call, fetchAll } from "../lib/api.js";
import { $, el } from "../lib/dom.js";
import { historyPanel } from "../lib/history-panel.js";
import { guardrailName } from "../lib/names.js";
import { shadowPanel } from "../lib/shadow-panel.js";
import { whatIfPanel } from "../lib/whatif-panel.js";
import { base, changesPath, coverage, isAccountPolicy, policyPath } from "./policy-common.js";
import { policyChange } from "./policy-form.js";

/**
 * The policy as the API answers it now: a workspace policy's GET (the list's summary has no
 * checks); a workspace-wide one has no GET of its own, and its list answers it whole.
 */
async function detail(p) {
  if (!isAccountPolicy(p)) return (await call("GET", policyPath(p))).data;
  const all = await fetchAll(base("account"), { policy_type: p.policy_type });
  const policy = all.find((x) => x.id === p.id);
  if (!policy) throw new Error(`Workspace-wide policy ${p.name} no longer exists.`);
  return policy;
}

/** The policy's shadow report, or undefined when none runs (the policy's `shadow` says). */
async function readShadow(p) {
  if (!(await detail(p)).shadow) return undefined;
  return (await call("GET", `${changesPath(p)}/shadow`)).data;
}

/** The edit form's change; a workspace-wide policy has no edit form here: its change is typed. */
function takeEdit(p) {
  if (isAccountPolicy(p))
    throw new Error(
      `${p.name} is workspace-wide, with no edit form here: type its change, the JSON a save of it sends.`,
    );
  return policyChange(p);
}

const history = historyPanel({
  prefix: "pol-history",
  path: changesPath,
  tables: { versions: "policy-versions", checks: "policy-checks" },
  noChecks: (p) =>
    p.policy_type === "budget"
      ? "Budget policies take no checks: an example request has no spend, so nothing a budget policy sets could change its outcome."
      : undefined,
});

const whatIf = whatIfPanel({
  prefix: "pol-whatif",
  path: changesPath,
  takeEdit,
  example: '{"name": "Team", "config": {"allowed_models": ["openai/tts-1"]}}',
  shadow: shadowPanel({
    prefix: "pol-shadow",
    path: (p) => `${changesPath(p)}/shadow`,
    read: readShadow,
    kind: "policy",
  }),
});

/** Says that mapped policy `p` follows its guardrail, with a link to each it was mapped from. */
function showFollows(p) {
  const links = p.legacy_guardrail_ids.map((id) => {
    const a = el("a", { href: `#guardrails?${new URLSearchParams({ q: id })}` }, guardrailName(id));
    // The Guardrails view lists one workspace: the policy's, where its guardrail is.
    a.addEventListener("click", () => {
      const pick = $("g-list-workspace");
      if ([...pick.options].some((o) => o.value === p.workspace_id)) pick.value = p.workspace_id;
    });
    return a;
  });
  const joined = links.flatMap((a, i) => (i === 0 ? [a] : [", ", a]));
  $("pol-follows-h").textContent = `${p.name} follows its guardrail`;
  $("pol-follows-text").replaceChildren(
    `${p.name} is mapped from guardrail `,
    ...joined,
    ": its history, checks, what-if and shadow are the guardrail's, on the Guardrails view. " +
      "Saving it here makes it a policy of its own, with a history from then on.",
  );
  $("pol-follows").hidden = false;
}

/** Under the what-if: a workspace-wide policy's what-if and shadow count each workspace it covers. */
function showCovers() {
  const p = whatIf.shown();
  $("pol-covers").hidden = !p || !isAccountPolicy(p);
  if ($("pol-covers").hidden) return;
  $("pol-covers").textContent =
    `${p.name} is workspace-wide: its what-if replays, and its shadow decides, the requests of ` +
    `each workspace it covers (${coverage(p)}), added up; the shadow's report names them.`;
}

async function open(p, panel) {
  $("pol-follows").hidden = true;
  $("pol-changes-error").textContent = "";
  if (p.is_legacy_mapped) {
    history.hide();
    whatIf.hide();
    showCovers();
    showFollows(p);
    return;
  }
  try {
    panel.show(await detail(p));
    showCovers();
  } catch (err) {
    $("pol-changes-error").textContent = `Policy ${p.name}: ${err.message}`;
  }
}

export const showPolicyHistory = (p) => open(p, history);
export const showPolicyWhatIf = (p) => open(p, whatIf);

export function hidePolicyChanges() {
  history.hide();
  whatIf.hide();
  $("pol-follows").hidden = true;
  $("pol-covers").hidden = true;
  $("pol-changes-error").textContent = "";
}

/** After a save of `p`: a history on show of it gains the version. */
export async function policySaved(p) {
  if (history.shown()?.id === p.id) await history.show(p);
}

export function policyDeleted(p) {
  if (history.shown()?.id === p.id) history.hide();
  if (whatIf.shown()?.id === p.id) whatIf.hide();
  showCovers();
}

/** `refresh` reads the list again after a restore or a promote. */
export function setupPolicyChanges(refresh) {
  history.setup(refresh);
  // A promote is a save: the history on show of the policy gains its version.
  whatIf.setup(async (p) => {
    await refresh();
    await policySaved(p);
  });
}
