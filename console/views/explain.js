// Explain a key: which guardrails apply to it and what they allow, as the API works it out,
// shown by name (guardrails, budgets, models and their endpoints), and the raw answer beside.

import { call } from "../lib/api.js";
import { $, el, facts, options, show } from "../lib/dom.js";
import { money } from "../lib/format.js";
import { allKeys, keyName, workspaceName } from "../lib/names.js";
import { scrollBox } from "../lib/table.js";

const yes = (b) => (b ? "yes" : "no");

/** A plain table of `rows`, each an array of texts under `heads`. */
function table(caption, heads, rows) {
  if (rows.length === 0) return el("p", { className: "empty" }, `No ${caption.toLowerCase()}.`);
  const t = el("table", { className: "compact" });
  t.createCaption().textContent = caption;
  const head = t.createTHead().insertRow();
  for (const h of heads) head.append(el("th", { scope: "col" }, h));
  const body = t.createTBody();
  for (const r of rows) {
    const tr = body.insertRow();
    for (const v of r) tr.insertCell().textContent = v;
  }
  return scrollBox(t, `${caption} table`);
}

function card(title, ...content) {
  return el("article", { className: "card" }, el("h3", {}, title), ...content);
}

function render(e) {
  return el(
    "div",
    {},
    card(
      `Key ${keyName(e.key_hash)}`,
      facts([
        ["Workspace", workspaceName(e.workspace_id)],
        ["Region", e.region ?? "any"],
        ["Region allowed", e.region_allowed === null ? "—" : yes(e.region_allowed)],
        ["Workspace credits", e.credits_usd === null ? "not metered" : money(e.credits_usd)],
      ]),
    ),
    card(
      "Guardrails that apply",
      table(
        "Guardrails",
        ["Guardrail", "From", "Contributes"],
        e.guardrails.map((g) => [g.name, g.source, yes(g.contributes)]),
      ),
    ),
    card(
      "Budgets",
      table(
        "Budgets",
        ["Guardrail", "Limit", "Window", "Spent", "Remaining", "Counts"],
        e.budgets.map((b) => [
          b.guardrail_name,
          `${money(b.limit_usd)} ${b.reset_interval}`,
          b.window,
          money(b.spent_usd),
          money(b.remaining_usd),
          `${b.scope} ${b.subject}`,
        ]),
      ),
    ),
    card(
      "Models",
      table(
        "Models",
        ["Model", "Allowed", "Why not", "Endpoints"],
        e.models.map((m) => [
          m.model,
          yes(m.allowed),
          m.reason ?? "—",
          m.endpoints
            .map((x) => `${x.provider}: ${x.eligible ? "eligible" : (x.reason ?? "not eligible")}`)
            .join("; "),
        ]),
      ),
    ),
  );
}

/**
 * A key typed by its name or its hash: a hash is taken as it is, a name is looked up among the
 * keys the console knows; a name that two keys share asks for the hash instead of guessing.
 */
function keyHashOf(typed) {
  const keys = allKeys();
  if (keys.some((k) => k.hash === typed)) return { hash: typed };
  const named = keys.filter((k) => k.name === typed);
  if (named.length === 1) return { hash: named[0].hash };
  if (named.length > 1)
    return {
      error: `${named.length} keys are named ${typed}: pick one by its hash (the suggestions show both).`,
    };
  // Not a name the console knows: the API says whether it is a hash.
  return { hash: typed };
}

async function explain(event) {
  event.preventDefault();
  const field = $("explain-hash");
  const { hash, error } = keyHashOf(field.value.trim());
  $("explain-hash-error").textContent = error ?? "";
  field.setAttribute("aria-invalid", error ? "true" : "false");
  if (error) {
    show("explain-view", el("div"));
    $("explain-out").textContent = "";
    field.focus();
    return;
  }
  try {
    const res = await call("GET", `/keys/${encodeURIComponent(hash)}/explain`);
    show("explain-view", render(res.data));
    $("explain-out").textContent = JSON.stringify(res, null, 2);
  } catch (err) {
    show("explain-view", el("p", { className: "error", role: "alert" }, err.message));
    $("explain-out").textContent = "";
  }
}

/** The field suggests every key by its name, with its label and hash to tell twins apart. */
export function fillExplainChoices() {
  options(
    $("explain-keys"),
    allKeys(),
    (k) => k.name,
    (k) => `${k.label} · ${k.hash.slice(0, 12)}…`,
  );
}

export function setupExplain() {
  $("explain-form").addEventListener("submit", explain);
}
