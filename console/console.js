// Railgate console: plain DOM, no framework, no build. Every call goes to this gateway's own
// /api/v1 (lib/api.js). This module signs in and out and shows one view at a time (the URL's
// #hash names it); each view's module (views/) owns its part of the page.

import { API, errorMessage, forgetKey, managementKey, rememberKey } from "./lib/api.js";
import { $, status } from "./lib/dom.js";
import { setCatalog, setupFieldChecks } from "./lib/field-check.js";
import { allWorkspaces, loadAllGuardrails, loadKeys } from "./lib/names.js";
import { parseHash } from "./lib/url-state.js";
import { rememberWorkspaceOf } from "./lib/workspace-choice.js";
import { fillActorChoices, refreshAudit, setupAudit } from "./views/audit.js";
import { refreshCredits, setupCredits } from "./views/credits.js";
import { refreshDashboard, setupDashboard } from "./views/dashboard.js";
import { fillExplainChoices, setupExplain } from "./views/explain.js";
import { fillGuardrailForm, setupGuardrailForm } from "./views/guardrail-form.js";
import {
  fillKeyChoices,
  refreshGuardrails,
  resetGuardrails,
  setupGuardrails,
} from "./views/guardrails.js";
import { refreshKeys, resetKeys, setupKeys } from "./views/keys.js";
import {
  enableLogSearch,
  fillLogChoices,
  fillModelChoices,
  refreshLogs,
  setupLogs,
} from "./views/logs.js";
import { loadModels, setupPlayground } from "./views/playground.js";
import { fillSubjects, refreshPolicies, resetPolicies, setupPolicies } from "./views/policies.js";
import { refreshWebhooks, resetWebhooks, setupWebhooks } from "./views/webhooks.js";
import { refreshWorkspaces, resetWorkspaces, setupWorkspaces } from "./views/workspaces.js";

/** The views that need the management key, each with what (re)loads it when shown. */
const loaders = {
  dashboard: withNames(refreshDashboard),
  logs: withNames(refreshLogs),
  keys: refreshKeys,
  workspaces: refreshWorkspaces,
  // Each workspace's credits: the list of workspaces read again first (one made elsewhere).
  credits: async () => {
    await refreshWorkspaces();
    await refreshCredits();
  },
  guardrails: refreshGuardrails,
  policies: withNames(refreshPolicies),
  audit: withNames(refreshAudit),
  webhooks: refreshWebhooks,
  explain: async () => {},
};

let signedIn = false;

/**
 * The views that name keys in what they show (and offer them as filters) read the key list
 * again first: a key made a minute ago, elsewhere, has its name too. (Guardrails, one list per
 * workspace, are read again only when a row names one the console does not know: logs.js.)
 */
function withNames(load) {
  const named = async () => {
    await loadKeys();
    keysChanged();
    await load();
  };
  Object.defineProperty(named, "name", { value: load.name });
  return named;
}

/** Runs a load; its failure is said in the status line with the API's message. */
async function run(load, name = load.name.replace(/^refresh/, "")) {
  try {
    await load();
  } catch (err) {
    status(`${name}: ${err.message}`);
  }
}

function views() {
  return [...document.querySelectorAll(".view")];
}

/** Shows the view the #hash names (a signed-out visitor gets sign-in or the playground). */
function route() {
  let view = parseHash().view;
  if (!views().some((v) => v.id === view)) view = signedIn ? "dashboard" : "signin";
  if (view in loaders && !signedIn) view = "signin";
  if (view === "signin" && signedIn) view = "dashboard";
  for (const v of views()) v.hidden = v.id !== view;
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.hash === `#${view}`) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  // What the last action did belongs to the view it was done on.
  if ($("status").dataset.view !== view) status("");
  const heading = $(view).querySelector("h2")?.textContent ?? "";
  document.title = `${heading} · Railgate console`;
  if (signedIn && loaders[view]) run(loaders[view], view);
}

/** The lists other views name things from: workspaces first (the pickers), then keys, guardrails. */
async function loadDirectory() {
  await run(refreshWorkspaces, "workspaces");
  await Promise.all([run(refreshKeys, "keys"), run(loadAllGuardrails, "guardrails")]);
  fillLogChoices();
}

function keysChanged() {
  fillKeyChoices();
  fillLogChoices();
  fillActorChoices();
  fillExplainChoices();
  fillSubjects();
}

async function signIn(key) {
  // Any management route answers 401/403 for a wrong key: the list of workspaces is a cheap one.
  const res = await fetch(`${API}/workspaces?limit=1`, {
    headers: { authorization: `Bearer ${key}` },
  });
  if (!res.ok) throw new Error(await errorMessage(res));
  rememberKey(key);
  signedIn = true;
  $("admin").hidden = false;
  $("nav-admin").hidden = false;
  $("nav-signin").hidden = true;
  $("signout").hidden = false;
  status("Signed in.");
  await loadDirectory();
  if (location.hash === "#signin" || location.hash === "") location.hash = "#dashboard";
  else route();
}

function signOut() {
  forgetKey();
  signedIn = false;
  // Nothing of the last session stays on screen for the next one.
  resetGuardrails();
  resetKeys();
  resetWorkspaces();
  resetWebhooks();
  resetPolicies();
  $("admin").hidden = true;
  $("nav-admin").hidden = true;
  $("nav-signin").hidden = false;
  $("signout").hidden = true;
  location.hash = "#signin";
  route();
  status("Signed out.");
  $("management-key").focus();
}

$("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("signin-error").textContent = "";
  $("management-key").removeAttribute("aria-invalid");
  try {
    await signIn($("management-key").value);
    $("management-key").value = "";
  } catch (err) {
    // Beside the form, where the key was typed, and the field marked.
    $("signin-error").textContent = `Sign-in failed: ${err.message}`;
    $("management-key").setAttribute("aria-invalid", "true");
    $("management-key").focus();
  }
});
$("signout").addEventListener("click", signOut);
$("g-list-workspace").addEventListener("change", () => run(refreshGuardrails, "guardrails"));
for (const select of document.querySelectorAll("select[data-remember]")) {
  select.addEventListener("change", () =>
    rememberWorkspaceOf(select, allWorkspaces().find((w) => w.is_default)?.id),
  );
}
for (const b of document.querySelectorAll("[data-load]")) {
  b.addEventListener("click", () => run(loaders[b.dataset.load], b.dataset.load));
}
window.addEventListener("hashchange", route);

setupDashboard(run);
setupLogs();
setupKeys(keysChanged);
setupWorkspaces(() => {});
setupCredits();
setupGuardrails();
setupPolicies();
setupAudit();
setupWebhooks();
setupExplain();
setupPlayground();

// The API's own document (public) says which builtin filters, actions and regions exist.
const openapi = await (await fetch(`${API}/openapi.json`)).json();
setupGuardrailForm(openapi);
enableLogSearch(openapi);
fillGuardrailForm(undefined);
setupFieldChecks();
loadModels().then((models) => {
  fillModelChoices(models);
  setCatalog(models);
});
route();
if (managementKey()) {
  signIn(managementKey()).catch(() => signOut());
}
