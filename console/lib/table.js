// A table for every list of the console: searchable, sortable by any column, paged. Rows are
// the API's objects; each column says how it reads as text (search, default cell), how it sorts
// and, optionally, what node its cell holds. Cells are text or nodes, never HTML.
//
// It fits a laptop and a phone: the first column (the row's name) stays in view while the table
// scrolls sideways, the row's actions come right after it, secondary columns wait behind a
// "Columns" toggle, a shadow and a hint say when there is more to the right, and under 640 px
// each row becomes a card (console.css).

import { el } from "./dom.js";

const COLUMNS_STORE = "railgate.columns.";

/**
 * A scroll box for a table: a named region that takes focus (keyboard users scroll it with the
 * arrow keys even when no cell holds a control), with a cue on the side where more of it is.
 */
export function scrollBox(table, label) {
  const box = el(
    "div",
    { className: "table-scroll", tabIndex: 0, role: "region", "aria-label": label },
    table,
  );
  box.addEventListener("scroll", () => updateCue(box), { passive: true });
  resizes.observe(box);
  return box;
}

function updateCue(box) {
  const more = box.scrollWidth - box.clientWidth;
  box.classList.toggle("scrolls", more > 1);
  box.classList.toggle("more-right", box.scrollLeft < more - 1);
  box.classList.toggle("more-left", box.scrollLeft > 1);
}

/** One observer for every scroll box; a box taken off the page (a list drawn again) is let go. */
const resizes = new ResizeObserver((entries) => {
  for (const { target } of entries) {
    if (target.isConnected) updateCue(target);
    else resizes.unobserve(target);
  }
});

/** The secondary columns this table shows, as the browser remembers them (per table id). */
function shownSecondary(id) {
  if (!id) return new Set();
  try {
    return new Set(JSON.parse(localStorage.getItem(COLUMNS_STORE + id) ?? "[]"));
  } catch {
    return new Set();
  }
}

/**
 * columns: [{ key, label, text(row) -> string, sort?(row) -> number|string, cell?(row) -> Node,
 * secondary?: true (behind the Columns toggle), numeric?: true (right-aligned figures) }]; the
 * first column names the row. actions(row) -> [buttons], the first the row's main one. pageSize
 * rows a page. With `server` ({ prev, next }) the pages are the API's (cursor paging): search and
 * sort then apply to the page on show. `onState({ q, page, sort })` hears each change of search,
 * page or order (the URL keeps them); `setState` puts one back.
 */
export function dataTable({
  caption,
  columns,
  actions,
  pageSize = 25,
  sort,
  server,
  id,
  one,
  onState,
}) {
  let rows = [];
  let page = 0;
  const initialOrder = sort ?? { key: columns[0].key, dir: 1 };
  let order = initialOrder;
  let serverState = { hasPrev: false, hasNext: false, page: 1 };
  const noun = caption.toLowerCase();
  const shown = shownSecondary(id);
  // "1 key", "2 keys": the caption is the plural; `one` where dropping its "s" is wrong.
  const counted = (n) => `${n} ${n === 1 ? (one ?? noun.replace(/s$/, "")) : noun}`;

  const search = el("input", {
    type: "search",
    className: "search",
    placeholder: server ? "Search this page" : "Search",
    "aria-label": server ? `Search ${noun} on this page` : `Search ${noun}`,
    id: id ? `${id}-search` : undefined,
  });
  const counter = el("span", { className: "count", "aria-live": "polite" });
  const hint = el("span", { className: "scroll-hint" }, "More columns to the right →");
  const toolbar = el("div", { className: "table-toolbar" }, search, counter);
  const secondary = columns.filter((c) => c.secondary);
  if (secondary.length > 0) toolbar.append(columnsToggle());
  const body = el("div", { className: "table-body" });
  const element = el("div", { className: "data-table" }, toolbar, body);
  search.addEventListener("input", () => {
    page = 0;
    render();
    tell();
  });

  function tell() {
    const changed = order.key !== initialOrder.key || order.dir !== initialOrder.dir;
    onState?.({
      q: search.value.trim(),
      page: server || page === 0 ? undefined : page + 1,
      sort: changed ? `${order.dir === 1 ? "" : "-"}${order.key}` : "",
    });
  }

  /** A "Columns" menu of checkboxes, one per secondary column; the choice outlives a reload. */
  function columnsToggle() {
    const list = el("fieldset", { className: "columns-list" });
    list.append(el("legend", {}, `Columns of ${noun} to show`));
    for (const c of secondary) {
      const box = el("input", { type: "checkbox", checked: shown.has(c.key) });
      box.addEventListener("change", () => {
        if (box.checked) shown.add(c.key);
        else shown.delete(c.key);
        if (id) localStorage.setItem(COLUMNS_STORE + id, JSON.stringify([...shown]));
        summary.textContent = summaryText();
        render();
      });
      list.append(el("label", { className: "check" }, box, ` ${c.label}`));
    }
    const summaryText = () => `Columns (${secondary.length - shown.size} hidden)`;
    const summary = el("summary", {}, summaryText());
    return el("details", { className: "columns-toggle" }, summary, list);
  }

  function visibleColumns() {
    return columns.filter((c) => !c.secondary || shown.has(c.key));
  }

  function textOf(column, row) {
    const v = column.text(row);
    return v === null || v === undefined ? "" : String(v);
  }

  function sortValue(column, row) {
    return column.sort ? column.sort(row) : textOf(column, row).toLowerCase();
  }

  function visibleRows() {
    const q = search.value.trim().toLowerCase();
    const found = q
      ? rows.filter((row) => columns.some((c) => textOf(c, row).toLowerCase().includes(q)))
      : [...rows];
    const column = columns.find((c) => c.key === order.key);
    if (column) {
      found.sort((a, b) => {
        const x = sortValue(column, a);
        const y = sortValue(column, b);
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * order.dir;
      });
    }
    return found;
  }

  function header(column, className) {
    const active = order.key === column.key;
    const th = el("th", {
      scope: "col",
      className,
      "aria-sort": active ? (order.dir === 1 ? "ascending" : "descending") : undefined,
    });
    const b = el(
      "button",
      { type: "button", className: "sort", "aria-label": `Sort ${noun} by ${column.label}` },
      column.label,
      el(
        "span",
        { className: "sort-mark", "aria-hidden": "true" },
        active ? (order.dir === 1 ? " ▲" : " ▼") : "",
      ),
    );
    b.addEventListener("click", () => {
      order = { key: column.key, dir: active ? -order.dir : 1 };
      render();
      tell();
      element.querySelector(`th[aria-sort] button`)?.focus();
    });
    th.append(b);
    return th;
  }

  function pager(total, pages) {
    const nav = el("nav", { className: "pager", "aria-label": `Pages of ${noun}` });
    const prev = el(
      "button",
      { type: "button", "aria-label": `Previous page of ${noun}` },
      "‹ Previous",
    );
    const next = el("button", { type: "button", "aria-label": `Next page of ${noun}` }, "Next ›");
    if (server) {
      prev.disabled = !serverState.hasPrev;
      next.disabled = !serverState.hasNext;
      prev.addEventListener("click", () => server.prev());
      next.addEventListener("click", () => server.next());
      nav.append(prev, el("span", {}, `Page ${serverState.page}`), next);
      return nav;
    }
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
    prev.addEventListener("click", () => {
      page -= 1;
      render();
      tell();
    });
    next.addEventListener("click", () => {
      page += 1;
      render();
      tell();
    });
    nav.append(prev, el("span", {}, `Page ${page + 1} of ${Math.max(pages, 1)}`), next);
    if (total === 0) nav.hidden = true;
    return nav;
  }

  /**
   * What the counter says. A server's list says its own total when it has one ("about" when the
   * API estimates it); without one, the rows on this page are all the console honestly knows.
   */
  function countText(found) {
    if (server) {
      const total = serverState.total;
      const of =
        total === undefined || total === null
          ? `${rows.length} shown`
          : `${rows.length} shown of ${serverState.estimated ? "about " : ""}${counted(total)}`;
      return found.length === rows.length ? of : `${found.length} match · ${of}`;
    }
    return found.length === rows.length
      ? counted(rows.length)
      : `${found.length} of ${counted(rows.length)}`;
  }

  function cell(tr, column, row) {
    const td = tr.insertCell();
    td.className = [column.className, column.numeric ? "num" : ""].filter(Boolean).join(" ");
    td.dataset.label = column.label;
    if (column.cell) td.append(column.cell(row));
    else td.textContent = textOf(column, row);
    return td;
  }

  function render() {
    toolbar.hidden = rows.length === 0 && !server;
    if (rows.length === 0) {
      counter.textContent = server ? "0 shown" : "";
      body.replaceChildren(el("p", { className: "empty" }, `No ${noun}.`));
      if (server) body.append(pager(0, 0));
      return;
    }
    const found = visibleRows();
    const pages = server ? 1 : Math.ceil(found.length / pageSize);
    page = Math.min(page, Math.max(pages - 1, 0));
    const onPage = server ? found : found.slice(page * pageSize, (page + 1) * pageSize);
    counter.textContent = countText(found);
    const [name, ...rest] = visibleColumns();
    const table = el("table");
    table.createCaption().textContent = caption;
    const head = table.createTHead().insertRow();
    head.append(header(name, "name"));
    if (actions) head.append(el("th", { scope: "col", className: "row-actions" }, "Actions"));
    for (const c of rest) head.append(header(c, c.numeric ? "num" : undefined));
    const tbody = table.createTBody();
    for (const row of onPage) {
      const tr = tbody.insertRow();
      const first = cell(tr, name, row);
      first.classList.add("name");
      if (actions) {
        const td = tr.insertCell();
        td.className = "row-actions";
        td.dataset.label = "Actions";
        td.append(el("div", { className: "actions" }, ...actions(row)));
      }
      for (const c of rest) cell(tr, c, row);
    }
    const content = [hint, scrollBox(table, `${caption} table`)];
    if (found.length === 0)
      content.push(el("p", { className: "empty" }, `No ${noun} match “${search.value.trim()}”.`));
    content.push(pager(found.length, pages));
    body.replaceChildren(...content);
  }

  return {
    element,
    setRows(next) {
      rows = next;
      render();
    },
    /** Cursor paging: which way the API can go from the page on show, and its total if known. */
    setServerState(state) {
      serverState = state;
    },
    /** Search, page (1-based) and order as a link had them ("-name": by name, descending). */
    setState({ q = "", page: at = 1, sort: by = "" }) {
      search.value = q;
      page = Math.max(0, (Number(at) || 1) - 1);
      const key = by.replace(/^-/, "");
      order = columns.some((c) => c.key === key)
        ? { key, dir: by.startsWith("-") ? -1 : 1 }
        : initialOrder;
      if (rows.length > 0) render();
    },
    rows: () => rows,
  };
}
