// Cursor paging over an API list (request log, audit log, deliveries): the API hands out the
// next page's cursor; the console keeps the cursors of the pages already seen to go back.

/**
 * `table` is a dataTable made with `server: pager` (see below); `fetchPage(cursor)` resolves to
 * the API's `{ data, next_cursor, total_count? }`. `onPage({ cursor, page })` hears each page
 * turn (the URL keeps it). Returns `{ pager, attach, reload, openAt }`: pass `pager` as the
 * table's `server`, call `reload()` when the filters change (back to the first page) and
 * `openAt(cursor, page)` for a page a link names.
 */
export function cursorPaging(fetchPage, onError, onPage = () => {}) {
  let table;
  // trail[i]: the cursor of page i + 1 (undefined for the first; null when a link skipped it).
  let trail = [undefined];
  let at = 0;
  let next = null;

  async function load() {
    try {
      const res = await fetchPage(trail[at]);
      next = res.next_cursor ?? null;
      table.setServerState({
        hasPrev: at > 0,
        hasNext: next !== null,
        page: at + 1,
        total: res.total_count,
        estimated: res.total_count_is_estimate === true,
      });
      table.setRows(res.data);
      onError("");
    } catch (err) {
      onError(err.message);
    }
  }

  return {
    pager: {
      prev() {
        if (at === 0) return undefined;
        at -= 1;
        // A page reached by a link has no cursors before it: back goes to the first page.
        if (trail[at] === null) at = 0;
        onPage({ cursor: trail[at], page: at + 1 });
        return load();
      },
      next() {
        if (next === null) return undefined;
        trail = trail.slice(0, at + 1);
        trail.push(next);
        at += 1;
        onPage({ cursor: next, page: at + 1 });
        return load();
      },
    },
    attach(t) {
      table = t;
    },
    /** The page on show, read again (its rows may have changed). */
    refresh() {
      return load();
    },
    reload() {
      trail = [undefined];
      at = 0;
      return load();
    },
    /** The page a URL names: the cursors seen are kept when it is one of them (Back, Forward). */
    openAt(cursor, page) {
      const n = Math.max(1, Number(page) || 1);
      if (!cursor || n === 1) return this.reload();
      if (trail[n - 1] !== cursor) {
        trail = [undefined, ...Array(n - 1).fill(null)];
        trail[n - 1] = cursor;
      }
      at = n - 1;
      return load();
    },
  };
}
