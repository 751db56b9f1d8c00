// Money, dates, durations and counts for people, in the browser's own locale (Intl).

const usd = new Intl.NumberFormat(undefined, { style: "currency", currency: "USD" });
const count = new Intl.NumberFormat(undefined);
const dateTimeFormat = new Intl.DateTimeFormat(undefined, {
  dateStyle: "medium",
  timeStyle: "short",
});
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });
const secondsFormat = new Intl.DateTimeFormat(undefined, {
  dateStyle: "medium",
  timeStyle: "medium",
});
const NONE = "—";

/**
 * One rule for every amount, so that two amounts compare at a glance: cents from $1 up, and
 * below $1 four significant digits (speech costs fractions of a cent), never fewer than cents.
 * $0.010038 reads $0.01004, $0.00255 stays $0.00255, $0.5 reads $0.50.
 */
export function money(value) {
  if (value === null || value === undefined || value === "") return NONE;
  const n = Number(value);
  if (!Number.isFinite(n)) return String(value);
  if (n === 0 || Math.abs(n) >= 1) return usd.format(n);
  const rounded = Number(n.toPrecision(4));
  if (Math.abs(rounded) >= 1) return usd.format(rounded);
  return moneyDigits(Math.max(2, decimals(rounded))).format(rounded);
}

/** How many digits a number has after its decimal point (1e-7 counted too). */
function decimals(n) {
  const [mantissa, exponent] = Math.abs(n).toExponential().split("e");
  const fraction = (mantissa.split(".")[1] ?? "").length;
  return Math.max(0, fraction - Number(exponent));
}

const moneyFormats = new Map();
function moneyDigits(digits) {
  if (!moneyFormats.has(digits))
    moneyFormats.set(
      digits,
      new Intl.NumberFormat(undefined, {
        style: "currency",
        currency: "USD",
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      }),
    );
  return moneyFormats.get(digits);
}

export function number(value) {
  if (value === null || value === undefined) return NONE;
  return count.format(value);
}

function asDate(value) {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

export function dateTime(value) {
  const d = asDate(value);
  return d ? dateTimeFormat.format(d) : NONE;
}

/** To the second: a request log's rows are often seconds apart. */
export function preciseTime(value) {
  const d = asDate(value);
  return d ? secondsFormat.format(d) : NONE;
}

export function date(value) {
  const d = asDate(value);
  return d ? dateFormat.format(d) : NONE;
}

export function milliseconds(value) {
  if (value === null || value === undefined) return NONE;
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${count.format(Math.round(value))} ms`;
}

export function seconds(value) {
  if (value === null || value === undefined) return NONE;
  return `${Number(value).toFixed(2)} s`;
}

export function bytes(value) {
  if (value === null || value === undefined) return NONE;
  if (value < 1024) return `${count.format(value)} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${(value / 1024 / 1024).toFixed(1)} MiB`;
}

export function list(values) {
  return values && values.length > 0 ? values.join(", ") : NONE;
}

/** A limit's reset interval in words: "daily", or "all-time" for none. */
export function reset(value) {
  return value ?? "all-time";
}

/** A `<input type="datetime-local">` value for an ISO time (local clock), and back. */
export function toLocalInput(iso) {
  const d = asDate(iso);
  if (!d) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function fromLocalInput(value) {
  return value ? new Date(value).toISOString() : null;
}
