// Credits: the organization's balance and usage, each workspace's, a top-up (or a take-back),
// and the history of credit changes from the audit log.

import { call, query } from "../lib/api.js";
import { $, show, statCards, status } from "../lib/dom.js";
import { dateTime, money } from "../lib/format.js";
import { allWorkspaces, workspaceName } from "../lib/names.js";
import { dataTable } from "../lib/table.js";
import { actorName } from "./audit.js";

const perWorkspace = dataTable({
  caption: "Workspace credits",
  id: "credits-table",
  columns: [
    { key: "name", label: "Workspace", text: (c) => workspaceName(c.workspace_id) },
    {
      key: "balance",
      label: "Balance",
      text: (c) => (c.metered ? money(c.balance_usd) : "not metered"),
      sort: (c) => c.balance_usd ?? -1,
      numeric: true,
    },
    {
      key: "credits",
      label: "Credits added",
      text: (c) => money(c.total_credits),
      sort: (c) => c.total_credits,
      numeric: true,
    },
    {
      key: "usage",
      label: "Drawn from credits",
      text: (c) => money(c.total_usage),
      sort: (c) => c.total_usage,
      numeric: true,
    },
    {
      key: "spend",
      label: "Spend, last 30 days",
      text: (c) => money(spendOf(c.workspace_id)),
      sort: (c) => spendOf(c.workspace_id),
      numeric: true,
    },
  ],
});

const history = dataTable({
  caption: "Credit changes",
  id: "credit-history-table",
  sort: { key: "at", dir: -1 },
  columns: [
    { key: "at", label: "When", text: (e) => dateTime(e.at), sort: (e) => e.at },
    {
      key: "workspace",
      label: "Workspace",
      text: (e) => workspaceName(e.workspace_id ?? e.resource?.id),
    },
    { key: "actor", label: "Who", text: (e) => actorName(e.actor) },
    {
      key: "amount",
      label: "Amount",
      text: (e) => money(e.changes?.amount_usd?.after),
      sort: (e) => e.changes?.amount_usd?.after ?? 0,
      numeric: true,
    },
    {
      key: "balance",
      label: "Balance after",
      text: (e) => money(e.changes?.balance_usd?.after),
      sort: (e) => e.changes?.balance_usd?.after ?? 0,
      numeric: true,
    },
  ],
});

/**
 * Each workspace's spend over the last 30 days, from the usage series the dashboard reads. A
 * workspace's credit usage counts only what was drawn from its credits (nothing before its first
 * top-up, nothing when it has none), so the two are shown side by side, each named for what it is.
 */
const spend = new Map();
const spendOf = (id) => spend.get(id) ?? 0;

async function loadSpend() {
  const rows = (await call("GET", `/usage${query({ granularity: "day", group_by: "workspace" })}`))
    .data;
  spend.clear();
  for (const r of rows) spend.set(r.group, spendOf(r.group) + (r.spend_usd ?? 0));
}

export async function refreshCredits() {
  const [org] = await Promise.all([call("GET", "/credits").then((r) => r.data), loadSpend()]);
  show(
    "credits-out",
    statCards([
      ["Balance", org.metered ? money(org.balance_usd) : "not metered"],
      ["Credits added", money(org.total_credits)],
      ["Drawn from credits", money(org.total_usage)],
      ["Spend, last 30 days", money([...spend.values()].reduce((a, b) => a + b, 0))],
    ]),
  );
  const rows = await Promise.all(
    allWorkspaces().map(
      async (w) => (await call("GET", `/workspaces/${encodeURIComponent(w.id)}/credits`)).data,
    ),
  );
  if (!$("credits-workspaces").contains(perWorkspace.element))
    show("credits-workspaces", perWorkspace.element);
  perWorkspace.setRows(rows);
  if (!$("credits-history").contains(history.element)) show("credits-history", history.element);
  // Up to the last 100 changes; the audit log view pages through all of them.
  history.setRows(
    (await call("GET", `/audit-log${query({ resource_type: "credits", limit: 100 })}`)).data,
  );
}

async function topUp(event) {
  event.preventDefault();
  const id = $("topup-workspace").value;
  const typed = $("topup-amount").value.trim();
  // Sent as typed: the API's 400 names the field and its rule.
  const amount = typed === "" || Number.isNaN(Number(typed)) ? typed : Number(typed);
  try {
    const res = await call("POST", `/workspaces/${encodeURIComponent(id)}/credits`, {
      amount_usd: amount,
    });
    $("topup-amount").value = "";
    await refreshCredits().catch((err) => status(`Credits: ${err.message}`));
    // Said once the figures on show say it too.
    $("topup-result").textContent =
      `${workspaceName(id)}: ${money(amount)} added, balance ${money(res.data.balance_usd)}.`;
    status(`Credits of ${workspaceName(id)} changed.`);
  } catch (err) {
    $("topup-result").textContent = err.message;
  }
}

export function setupCredits() {
  $("topup-form").addEventListener("submit", topUp);
}
