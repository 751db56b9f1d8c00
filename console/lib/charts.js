// Charts through Chart.js (served from node_modules by the gateway as a classic script: it
// defines the global `Chart`). Each chart is a canvas with a text name (role img) and, beside it,
// the same figures as a table for screen readers and for copying.

import { el } from "./dom.js";

/** Eight colours that tell apart on white and for the common colour-vision deficiencies. */
const PALETTE = [
  "#1f6feb",
  "#e8590c",
  "#2b8a3e",
  "#ae3ec9",
  "#c92a2a",
  "#0c8599",
  "#f08c00",
  "#495057",
];

const charts = new Map();

export function colour(i) {
  return PALETTE[i % PALETTE.length];
}

/**
 * Draws (or redraws) a chart into `holder`: a card body that gets a canvas and a "figures"
 * table. `series` is [{ label, values[] }] over `labels`; `format` turns a value into text.
 */
export function drawChart(
  holder,
  { title, type, labels, series, format, stacked, whole, budgets = [] },
) {
  charts.get(holder.id)?.destroy();
  const canvas = el("canvas", {
    role: "img",
    "aria-label": describe(title, labels, series, format, budgets),
  });
  const figures = el(
    "details",
    { className: "figures" },
    el("summary", {}, `${title}: the figures`),
    figureTable(title, labels, series, format),
  );
  const empty = series.length === 0 || labels.length === 0;
  holder.replaceChildren(
    empty
      ? el("p", { className: "empty" }, "No requests in this range.")
      : el("div", { className: "chart-box" }, canvas),
    figures,
  );
  if (empty) return;
  const chart = new window.Chart(canvas, {
    type,
    data: {
      labels,
      datasets: [
        ...series.map((s, i) => ({
          label: s.label,
          data: s.values,
          backgroundColor: s.colour ?? colour(i),
          borderColor: s.colour ?? colour(i),
          borderWidth: type === "line" ? 2 : 0,
          pointRadius: type === "line" ? 3 : 0,
          tension: 0.2,
          borderDash: s.dashed ? [6, 4] : undefined,
        })),
        // A day's budget as a level line across the bars, in a stack of its own so that it
        // stands at its value rather than on top of the spend.
        ...budgets.map((b) => ({
          type: "line",
          label: b.label,
          data: labels.map(() => b.value),
          stack: `budget ${b.label}`,
          borderColor: "#a51d2d",
          backgroundColor: "#a51d2d",
          borderWidth: 2,
          borderDash: [8, 4],
          pointRadius: 0,
        })),
      ],
    },
    options: {
      // Drawn once, at once: a screenshot or a reader sees the final chart.
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: "index", intersect: false },
      scales: {
        x: { stacked: Boolean(stacked), grid: { display: false } },
        y: {
          stacked: Boolean(stacked),
          beginAtZero: true,
          // Counts step by whole numbers: no "2.5 requests" on the axis.
          ticks: { callback: (v) => format(v), ...(whole ? { precision: 0 } : {}) },
          // Ticks closer together than the format's precision would read the same: each label
          // is shown once.
          afterTickToLabelConversion(axis) {
            const seen = new Set();
            for (const tick of axis.ticks) {
              if (seen.has(tick.label)) tick.label = "";
              else seen.add(tick.label);
            }
          },
        },
      },
      plugins: {
        legend: { position: "bottom", labels: { boxWidth: 12 } },
        tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${format(c.parsed.y)}` } },
      },
    },
  });
  charts.set(holder.id, chart);
}

/** The canvas's text name: what it shows and its totals, for whoever cannot see it. */
function describe(title, labels, series, format, budgets) {
  if (series.length === 0 || labels.length === 0) return `${title}: no data`;
  const totals = series.map(
    (s) => `${s.label} ${format(s.values.reduce((a, b) => a + (b ?? 0), 0))}`,
  );
  const lines = budgets.map((b) => `${b.label}: ${format(b.value)} a day`);
  return `${title}, ${labels[0]} to ${labels[labels.length - 1]}: ${[...totals, ...lines].join("; ")}`;
}

function figureTable(title, labels, series, format) {
  const table = el("table", { className: "compact" });
  table.createCaption().textContent = title;
  const head = table.createTHead().insertRow();
  head.append(
    el("th", { scope: "col" }, "Day"),
    ...series.map((s) => el("th", { scope: "col" }, s.label)),
  );
  const body = table.createTBody();
  labels.forEach((label, i) => {
    const tr = body.insertRow();
    tr.append(el("th", { scope: "row" }, label));
    for (const s of series)
      tr.insertCell().textContent = s.values[i] === null ? "—" : format(s.values[i]);
  });
  return table;
}
