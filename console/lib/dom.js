// Small DOM helpers: every text goes in as text (textContent), never as HTML.

export const $ = (id) => document.getElementById(id);

/**
 * An element: `attrs` are properties (className, type, ...), except `aria-*`, `data-*`, `for`
 * and `role`, which are attributes; children are nodes or text.
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("aria-") || name.startsWith("data-") || name === "role" || name === "for") {
      node.setAttribute(name, String(value));
    } else node[name] = value;
  }
  node.append(...children.filter((c) => c !== undefined && c !== null && c !== false));
  return node;
}

/** A button whose accessible name (`label`) says what it acts on: "Delete key ci-bot". */
export function button(text, label, onClick, className) {
  const b = el("button", { type: "button", className, "aria-label": label }, text);
  b.addEventListener("click", onClick);
  return b;
}

export function show(id, node) {
  $(id).replaceChildren(node);
}

/** Replaces a select's (or datalist's) options, keeping the chosen value when it is still there. */
export function options(select, items, value, label) {
  const chosen = select.value;
  select.replaceChildren(...items.map((item) => el("option", { value: value(item) }, label(item))));
  if (chosen && items.some((item) => value(item) === chosen)) select.value = chosen;
}

/** The status line: a polite live region that says what the last action did. */
export function status(text) {
  $("status").textContent = text;
  // Said on this view: leaving it clears the line (console.js route).
  $("status").dataset.view = location.hash.replace(/^#/, "").split("?")[0];
}

/** A labelled value for a card or a detail list: <dt>label</dt><dd>value</dd>. */
export function facts(pairs) {
  const dl = el("dl", { className: "facts" });
  for (const [term, value] of pairs) dl.append(el("dt", {}, term), el("dd", {}, value));
  return dl;
}

/** Cards of figures (a dashboard's totals, a balance): each a label and a big value. */
export function statCards(items) {
  return el(
    "ul",
    { className: "stats" },
    ...items.map(([label, value]) =>
      el(
        "li",
        { className: "stat" },
        el("span", { className: "stat-label" }, label),
        el("span", { className: "stat-value" }, value),
      ),
    ),
  );
}
