// Sample records of a what-if or shadow answer: each id opens the request log on that record.

import { el } from "./dom.js";

/** A list named `label` of links to the log, or `none` in a paragraph when there is no id. */
export function recordLinks(ids, label, workspaceId, none) {
  if (ids.length === 0) return el("p", {}, none);
  const link = (id) => {
    const q = new URLSearchParams({ q: id, workspace: workspaceId ?? "" });
    return el("li", {}, el("a", { href: `#logs?${q}`, className: "mono" }, id));
  };
  return el("ul", { "aria-label": label }, ...ids.map(link));
}
