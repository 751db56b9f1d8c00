// A guardrail's history and checks (console/lib/history-panel.js) on the Guardrails view.

import { historyPanel } from "../lib/history-panel.js";

const panel = historyPanel({
  prefix: "history",
  path: (g) => `/guardrails/${encodeURIComponent(g.id)}`,
  tables: { versions: "guardrail-versions", checks: "guardrail-checks" },
});

/** Shows the history and checks of guardrail `g` (as the API answered it). */
export const showHistory = panel.show;
export const hideHistory = panel.hide;

export function setupHistory() {
  panel.setup();
}
