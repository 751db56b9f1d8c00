// The dashboard: spend per day by model and by key, requests per day by status, and time to
// first byte (p50, p95), over a chosen range of days, from GET /api/v1/usage.

import { call, query } from "../lib/api.js";
import { colour, drawChart } from "../lib/charts.js";
import { $, el, facts, show, statCards } from "../lib/dom.js";
import { milliseconds, money, number } from "../lib/format.js";
import { allGuardrails, keyName, workspaceName } from "../lib/names.js";
import { refusalWords } from "../lib/refusals.js";

const DAY = 86_400_000;
/**
 * A status reads by its colour at a glance: served green, refused and failed red, cut amber,
 * unavailable (the store was down: no decision) grey.
 */
const STATUS_COLOURS = {
  completed: "#2b8a3e",
  refused: "#c92a2a",
  failed: "#862e9c",
  cancelled: "#e67700",
  unavailable: "#868e96",
};
// Days are UTC days, as the API's buckets are: a label names the day the bucket starts.
const dayLabel = new Intl.DateTimeFormat(undefined, {
  month: "short",
  day: "numeric",
  timeZone: "UTC",
});

/** The range's days as UTC midnights, first to last (both included). */
function days(from, to) {
  const out = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY)
    out.push(t);
  return out;
}

/**
 * The API's rows as chart series: one per group, one value per day of the range (a day without
 * a row is 0, or null for a percentile, which has no value without requests).
 */
function series(rows, dayList, field, name, empty = 0) {
  const groups = new Map();
  for (const row of rows) {
    if (!groups.has(row.group))
      groups.set(row.group, { label: name(row), values: dayList.map(() => empty) });
    const i = dayList.indexOf(Date.parse(row.bucket));
    if (i >= 0) groups.get(row.group).values[i] = row[field];
  }
  return [...groups.values()];
}

function sum(rows, field) {
  return rows.reduce((a, r) => a + (r[field] ?? 0), 0);
}

async function usage(groupBy, from, to) {
  const workspace = $("range-workspace").value;
  return (
    await call(
      "GET",
      `/usage${query({
        granularity: "day",
        group_by: groupBy,
        from: new Date(Date.parse(`${from}T00:00:00Z`)).toISOString(),
        to: new Date(Date.parse(`${to}T00:00:00Z`) + DAY).toISOString(),
        workspace_id: workspace,
      })}`,
    )
  ).data;
}

/**
 * The daily budgets of the workspace on show (every workspace's when none is chosen), as lines
 * on the spend chart: a day's spend reads against what a day may spend. A budget far above the
 * busiest day's spend is left out, as it would flatten the bars to nothing.
 */
function dailyBudgets(spend) {
  const workspace = $("range-workspace").value;
  const perDay = (spend[0]?.values ?? []).map((_, i) =>
    spend.reduce((a, s) => a + (s.values[i] ?? 0), 0),
  );
  const busiest = Math.max(0, ...perDay);
  return allGuardrails()
    .filter((g) => g.limit_usd !== null && g.reset_interval === "daily")
    .filter((g) => !workspace || (g.workspace_id ?? "") === workspace)
    .filter((g) => busiest > 0 && g.limit_usd <= busiest * 20)
    .slice(0, 3)
    .map((g) => ({ label: `Budget ${g.name}`, value: g.limit_usd }));
}

export async function refreshDashboard() {
  const from = $("range-from").value;
  const to = $("range-to").value;
  $("dashboard-error").textContent = "";
  if (!from || !to || from > to) {
    $("dashboard-error").textContent = "Choose a range: From on or before To.";
    return;
  }
  const dayList = days(from, to);
  const labels = dayList.map((t) => dayLabel.format(t));
  const [byModel, byKey, byStatus, byWorkspace] = await Promise.all(
    ["model", "key", "status", "workspace"].map((g) => usage(g, from, to)),
  );
  show(
    "dashboard-stats",
    statCards([
      ["Spend", money(sum(byModel, "spend_usd"))],
      ["Requests", number(sum(byModel, "requests"))],
      ["Blocked", number(sum(byModel, "blocked"))],
      ["Redacted", number(sum(byModel, "redacted"))],
      ["Flagged", number(sum(byModel, "flagged"))],
      ["Refused", number(sum(byModel, "refused"))],
    ]),
  );
  showRefusals(byModel);
  const label = (row) => row.label || row.group;
  const spendByModel = series(byModel, dayList, "spend_usd", label);
  drawChart($("chart-model"), {
    title: "Spend per day by model",
    type: "bar",
    stacked: true,
    labels,
    series: spendByModel,
    format: money,
    budgets: dailyBudgets(spendByModel),
  });
  drawChart($("chart-key"), {
    title: "Spend per day by key",
    type: "bar",
    stacked: true,
    labels,
    series: series(byKey, dayList, "spend_usd", (row) => row.label || keyName(row.group)),
    format: money,
  });
  drawChart($("chart-status"), {
    title: "Requests per day by status",
    type: "bar",
    stacked: true,
    labels,
    series: series(byStatus, dayList, "requests", label).map((s) => ({
      ...s,
      colour: STATUS_COLOURS[s.label],
    })),
    format: number,
    whole: true,
  });
  const place = (row) => row.label || workspaceName(row.group);
  const p50 = series(byWorkspace, dayList, "ttfb_p50_ms", (row) => `${place(row)} p50`, null);
  const p95 = series(byWorkspace, dayList, "ttfb_p95_ms", (row) => `${place(row)} p95`, null);
  drawChart($("chart-ttfb"), {
    title: "Time to first byte",
    type: "line",
    labels,
    // One colour per workspace: p50 dashed, p95 solid.
    series: p50.flatMap((s, i) => [
      { ...s, dashed: true, colour: colour(i) },
      { ...p95[i], colour: colour(i) },
    ]),
    format: milliseconds,
  });
}

/** Refusals by reason over the range, most first: what "Refused" is made of. */
function showRefusals(rows) {
  const byReason = new Map();
  for (const row of rows)
    for (const [reason, n] of Object.entries(row.refused_by_reason ?? {}))
      byReason.set(reason, (byReason.get(reason) ?? 0) + n);
  const list = [...byReason].sort((a, b) => b[1] - a[1]);
  show(
    "dashboard-refusals",
    list.length === 0
      ? el("p", {}, "No request was refused in this range.")
      : el(
          "section",
          { className: "card", "aria-label": "Refusals by reason" },
          el("h3", {}, "Refusals by reason"),
          facts(list.map(([reason, n]) => [refusalWords(reason), number(n)])),
        ),
  );
}

/** The last `n` days up to today (UTC). */
function lastDays(n) {
  const today = new Date();
  const utc = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()));
  $("range-to").value = utcDay(utc);
  $("range-from").value = utcDay(new Date(utc.getTime() - (n - 1) * DAY));
}

function utcDay(d) {
  return d.toISOString().slice(0, 10);
}

export function setupDashboard(run) {
  lastDays(7);
  $("range-form").addEventListener("submit", (event) => {
    event.preventDefault();
    run(refreshDashboard);
  });
  for (const b of document.querySelectorAll("[data-range]")) {
    b.addEventListener("click", () => {
      lastDays(Number(b.dataset.range));
      run(refreshDashboard);
    });
  }
}
