// Cursor paging over an API list (request log, audit log, deliveries): the API hands out the
// next page's cursor; the console keeps the cursors of the pages already seen to go back.

/**
 * `table` is a dataTable made with `server: pager` (see below); `fetchPage(cursor)` resolves to
 * the API's `{ data, next_cursor }`. Returns `{ pager, reload }`: pass `pager` as the table's
 * `server`, call `reload()` when the filters change (back to the first page).
 */
export function cursorPaging(fetchPage, onError) {
  let table;
  let seen = [undefined];
  let at = 0;
  let next = null;

  async function load() {
    try {
      const res = await fetchPage(seen[at]);
      next = res.next_cursor ?? null;
      table.setServerState({ hasPrev: at > 0, hasNext: next !== null, page: at + 1 });
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
        return load();
      },
      next() {
        if (next === null) return undefined;
        seen = seen.slice(0, at + 1);
        seen.push(next);
        at += 1;
        return load();
      },
    },
    attach(t) {
      table = t;
    },
    reload() {
      seen = [undefined];
      at = 0;
      return load();
    },
  };
}
