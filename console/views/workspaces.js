// Workspaces: list, create, edit (name, slug, description, the audio cache switch), delete after
// a confirmation, and the way to each one's default guardrail; each row shows its audio cache's
// hit ratio and what it holds (GET /workspaces/:id/audio-cache), and its members are one click
// away (views/workspace-members.js). Every workspace picker of the console fills from here.

import { call } from "../lib/api.js";
import { $, button, options, show, status } from "../lib/dom.js";
import { bytes, dateTime } from "../lib/format.js";
import { guardrailName, loadWorkspaces } from "../lib/names.js";
import { dataTable } from "../lib/table.js";
import { keepTableState, viewParams } from "../lib/url-state.js";
import { applyRememberedWorkspace } from "../lib/workspace-choice.js";
import { editWorkspaceDefault } from "./guardrails.js";
import { refreshMembers, setupMembers, showMembersOf } from "./workspace-members.js";

const table = dataTable({
  caption: "Workspaces",
  id: "workspaces-table",
  onState: keepTableState(),
  columns: [
    { key: "name", label: "Name", text: (w) => (w.is_default ? `${w.name} (default)` : w.name) },
    { key: "description", label: "Description", text: (w) => w.description ?? "—" },
    {
      key: "audio_cache",
      label: "Audio cache",
      text: (w) => audioCacheText(w),
      sort: (w) => cacheStats.get(w.id)?.hit_ratio ?? -1,
    },
    {
      key: "guardrail",
      label: "Default guardrail",
      text: (w) => guardrailName(w.default_guardrail_id),
    },
    { key: "slug", label: "Slug", text: (w) => w.slug, className: "mono" },
    { key: "id", label: "ID", text: (w) => w.id, className: "mono clip", secondary: true },
    {
      key: "created",
      label: "Created",
      text: (w) => dateTime(w.created_at),
      sort: (w) => w.created_at,
      secondary: true,
    },
  ],
  actions: (w) =>
    [
      button("Edit", `Edit workspace ${w.name}`, () => fillForm(w)),
      button("Members", `Members of workspace ${w.name}`, () => void showMembersOf(w.id)),
      button("Default guardrail", `Edit the default guardrail of ${w.name}`, () =>
        editWorkspaceDefault(w),
      ),
      w.is_default
        ? undefined
        : button("Delete", `Delete workspace ${w.name}`, () => deleteWorkspace(w), "danger"),
    ].filter(Boolean),
});

/** Each workspace's audio cache as last read (GET /workspaces/:id/audio-cache), by id. */
const cacheStats = new Map();

/** "on · 75% hits (3 of 4) · 2 clips, 24.0 KiB" or "off". */
function audioCacheText(w) {
  const s = cacheStats.get(w.id);
  if (!w.audio_cache) return s && s.clips > 0 ? `off · ${s.clips} clips kept` : "off";
  if (!s) return "on";
  const lookups = s.hits + s.collapsed + s.misses;
  const ratio =
    s.hit_ratio === null
      ? "no requests yet"
      : `${Math.round(s.hit_ratio * 100)}% hits (${s.hits + s.collapsed} of ${lookups})`;
  return `on · ${ratio} · ${s.clips} clips, ${bytes(s.bytes)} of ${bytes(s.budget_bytes)}`;
}

async function loadCacheStats(workspaces) {
  await Promise.all(
    workspaces.map(async (w) => {
      try {
        const res = await call("GET", `/workspaces/${encodeURIComponent(w.id)}/audio-cache`);
        cacheStats.set(w.id, res.data);
      } catch {
        cacheStats.delete(w.id);
      }
    }),
  );
}

/** Called after the list changed: the views that name or pick workspaces refresh. */
let onChange = () => {};
let editing;

/**
 * Every workspace picker: `data-workspaces="all"` may be left at every workspace (a filter);
 * "every" names each workspace by its id (a route that takes one in its path); "pick" (and the
 * guardrail form's) start at the default workspace as "", which the API takes for an absent
 * workspace_id.
 */
function fillPickers(workspaces) {
  const named = workspaces.filter((w) => !w.is_default);
  const home = workspaces.find((w) => w.is_default);
  const first = { id: "", name: home ? `${home.name} (default)` : "the default workspace" };
  const every = home ? [{ ...home, name: `${home.name} (default)` }, ...named] : named;
  for (const select of document.querySelectorAll("select[data-workspaces]")) {
    const kind = select.dataset.workspaces;
    const items =
      kind === "all"
        ? [{ id: "", name: "All workspaces" }, ...every]
        : kind === "every"
          ? every
          : [first, ...named];
    options(
      select,
      items,
      (w) => w.id,
      (w) => w.name,
    );
  }
  for (const id of ["g-workspace", "g-list-workspace"]) {
    const select = $(id);
    const chosen = select.value;
    options(
      select,
      [first, ...named],
      (w) => w.id,
      (w) => w.name,
    );
    select.value = chosen;
  }
  applyRememberedWorkspace(document.querySelectorAll("select[data-remember]"), home?.id);
}

export async function refreshWorkspaces() {
  table.setState(viewParams("workspaces"));
  if (!$("workspaces-list").contains(table.element)) show("workspaces-list", table.element);
  const workspaces = await loadWorkspaces();
  await loadCacheStats(workspaces);
  table.setRows(workspaces);
  fillPickers(workspaces);
  await refreshMembers();
  onChange();
}

function fillForm(w) {
  editing = w;
  $("w-id").value = w?.id ?? "";
  $("w-name").value = w?.name ?? "";
  $("w-slug").value = w?.slug ?? "";
  $("w-description").value = w?.description ?? "";
  $("w-audio-cache").checked = w?.audio_cache ?? false;
  $("workspace-form-h").textContent = w ? `Edit workspace ${w.name}` : "Create a workspace";
  $("w-submit").textContent = w ? "Save workspace" : "Create workspace";
  $("workspace-error").textContent = "";
  if (w) $("w-name").focus();
}

async function saveWorkspace(event) {
  event.preventDefault();
  $("workspace-error").textContent = "";
  const now = {
    name: $("w-name").value,
    slug: $("w-slug").value.trim(),
    description: $("w-description").value || null,
    audio_cache: $("w-audio-cache").checked,
  };
  let body = now;
  if (editing) {
    body = {};
    for (const [field, value] of Object.entries(now)) {
      if (value !== (editing[field] ?? null)) body[field] = value;
    }
    if (Object.keys(body).length === 0) {
      $("workspace-error").textContent = "Nothing changed: edit a field, then save.";
      return;
    }
  }
  try {
    const res = editing
      ? await call("PATCH", `/workspaces/${encodeURIComponent(editing.id)}`, body)
      : await call("POST", "/workspaces", body);
    status(`Workspace ${res.data.name} ${editing ? "saved" : "created"}.`);
    fillForm(undefined);
    await refreshWorkspaces();
  } catch (err) {
    $("workspace-error").textContent = err.message;
  }
}

async function deleteWorkspace(w) {
  if (!window.confirm(`Delete workspace ${w.name} (${w.slug})? This cannot be undone.`)) {
    status(`Workspace ${w.name} kept.`);
    return;
  }
  try {
    await call("DELETE", `/workspaces/${encodeURIComponent(w.id)}`);
    status(`Workspace ${w.name} deleted.`);
    if (editing?.id === w.id) fillForm(undefined);
    await refreshWorkspaces();
  } catch (err) {
    status(`Delete workspace ${w.name}: ${err.message}`);
  }
}

export function setupWorkspaces(changed) {
  onChange = changed;
  setupMembers();
  $("workspace-form").addEventListener("submit", saveWorkspace);
  $("w-new").addEventListener("click", () => {
    fillForm(undefined);
    $("w-name").focus();
  });
}

export function resetWorkspaces() {
  fillForm(undefined);
}
