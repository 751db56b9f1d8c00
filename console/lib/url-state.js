// A view's filters and page live in the URL after its name (#logs?status=refused&page=2), so a
// link shares them and Back returns to the list as it was. Typing in a search box replaces the
// entry; applying filters or turning a page pushes a new one.

/** The view a hash names and its parameters: "#logs?status=refused" -> { view, params }. */
export function parseHash(hash = location.hash) {
  const [view = "", search = ""] = hash.replace(/^#/, "").split("?");
  return { view, params: new URLSearchParams(search) };
}

/** The parameters of the view on show, as a plain object; none when `view` is not the one on show. */
export function viewParams(view) {
  const shown = parseHash();
  if (view && shown.view !== view) return {};
  return Object.fromEntries(shown.params);
}

/**
 * Puts `values` (the unset ones left out) in the URL of the view on show, as a new history entry
 * (`push`) or in place of the current one. No hashchange follows: the caller shows the list.
 */
export function setViewParams(values, { push = true } = {}) {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== null && value !== "") q.set(name, String(value));
  }
  const s = q.toString();
  const hash = `#${parseHash().view}${s ? `?${s}` : ""}`;
  if (hash === location.hash) return;
  if (push) history.pushState(null, "", hash);
  else history.replaceState(null, "", hash);
}

/** A table's search, page and order (its onState) kept in the URL in place, beside `extra`. */
export function keepTableState(extra = () => ({})) {
  return (state) => setViewParams({ ...extra(), ...state }, { push: false });
}
