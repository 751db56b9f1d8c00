// The workspace last chosen in a list's picker (dashboard, request log, guardrails), remembered by
// the browser: every view and the next visit open on it instead of the default workspace.

const STORE = "railgate.workspace";

export function rememberedWorkspace() {
  return localStorage.getItem(STORE) ?? "";
}

/**
 * Sets each picker of `selects` to the remembered workspace when it offers it. A picker without
 * "All workspaces" lists the default workspace as "" (`homeId` is its id).
 */
export function applyRememberedWorkspace(selects, homeId) {
  const id = rememberedWorkspace();
  for (const select of selects) {
    const value = select.dataset.home === "blank" && id === homeId ? "" : id;
    if ([...select.options].some((o) => o.value === value)) select.value = value;
  }
}

/** Remembers what `select` was set to: "" in a picker that lists the default workspace so is its id. */
export function rememberWorkspaceOf(select, homeId) {
  const value = select.value === "" && select.dataset.home === "blank" ? homeId : select.value;
  localStorage.setItem(STORE, value ?? "");
}
