// A table for every list of the console: searchable, sortable by any column, paged. Rows are
// the API's objects; each column says how it reads as text (search, default cell), how it sorts
// and, optionally, what node its cell holds. Cells are text or nodes, never HTML.

import { el } from "./dom.js";

/**
 * columns: [{ key, label, text(row) -> string, sort?(row) -> number|string, cell?(row) -> Node }]
 * actions(row) -> [buttons]; pageSize rows a page. With `server` ({ prev, next }) the pages are
 * the API's (cursor paging): search and sort then apply to the page on show.
 */
export function dataTable({ caption, columns, actions, pageSize = 25, sort, server, id, one }) {
  let rows = [];
  let page = 0;
  let order = sort ?? { key: columns[0].key, dir: 1 };
  let serverState = { hasPrev: false, hasNext: false, page: 1 };
  const noun = caption.toLowerCase();
  // "1 key", "2 keys": the caption is the plural; `one` where dropping its "s" is wrong.
  const counted = (n) => `${n} ${n === 1 ? (one ?? noun.replace(/s$/, "")) : noun}`;

  const search = el("input", {
    type: "search",
    className: "search",
    placeholder: "Search",
    "aria-label": `Search ${noun}`,
    id: id ? `${id}-search` : undefined,
  });
  const counter = el("span", { className: "count", "aria-live": "polite" });
  const toolbar = el("div", { className: "table-toolbar" }, search, counter);
  const body = el("div", { className: "table-body" });
  const element = el("div", { className: "data-table" }, toolbar, body);
  search.addEventListener("input", () => {
    page = 0;
    render();
  });

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

  function header(column) {
    const active = order.key === column.key;
    const th = el("th", {
      scope: "col",
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
    });
    next.addEventListener("click", () => {
      page += 1;
      render();
    });
    nav.append(prev, el("span", {}, `Page ${page + 1} of ${Math.max(pages, 1)}`), next);
    if (total === 0) nav.hidden = true;
    return nav;
  }

  function render() {
    toolbar.hidden = rows.length === 0 && !server;
    if (rows.length === 0) {
      counter.textContent = "";
      body.replaceChildren(el("p", { className: "empty" }, `No ${noun}.`));
      if (server) body.append(pager(0, 0));
      return;
    }
    const found = visibleRows();
    const pages = server ? 1 : Math.ceil(found.length / pageSize);
    page = Math.min(page, Math.max(pages - 1, 0));
    const shown = server ? found : found.slice(page * pageSize, (page + 1) * pageSize);
    counter.textContent =
      found.length === rows.length
        ? counted(rows.length)
        : `${found.length} of ${counted(rows.length)}`;
    const table = el("table");
    table.createCaption().textContent = caption;
    const head = table.createTHead().insertRow();
    for (const c of columns) head.append(header(c));
    if (actions) head.append(el("th", { scope: "col" }, "Actions"));
    const tbody = table.createTBody();
    for (const row of shown) {
      const tr = tbody.insertRow();
      for (const c of columns) {
        const td = tr.insertCell();
        if (c.className) td.className = c.className;
        if (c.cell) td.append(c.cell(row));
        else td.textContent = textOf(c, row);
      }
      if (actions) tr.insertCell().append(el("div", { className: "actions" }, ...actions(row)));
    }
    const content = [el("div", { className: "table-scroll" }, table)];
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
    /** Cursor paging: which way the API can go from the page on show. */
    setServerState(state) {
      serverState = state;
    },
    rows: () => rows,
  };
}
