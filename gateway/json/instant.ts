/** The shape parseInstant takes, as the OpenAPI document states it (a JSON Schema pattern). */
export const INSTANT_PATTERN =
  "^(\\d{4})-(\\d{2})-(\\d{2})(?:T(\\d{2}):(\\d{2})(?::(\\d{2})(\\.\\d{1,9})?)?(?:Z|([+-])(\\d{2}):(\\d{2})))?$";
const SHAPE = new RegExp(INSTANT_PATTERN);

/**
 * An ISO 8601 instant (`2026-11-26T08:00:00Z`, `...T09:00:00.5+01:00`) or a UTC day
 * (`2026-11-26`, its midnight), checked field by field: `Date` alone would roll
 * `2030-02-30` over to March 2nd instead of refusing it. Undefined when it is not one.
 */
export function parseInstant(text: string): Date | undefined {
  const m = SHAPE.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h = 0, mi = 0, s = 0] = [1, 2, 3, 4, 5, 6].map((i) =>
    m[i] === undefined ? undefined : Number(m[i]),
  ) as number[];
  const fraction = m[7] ? Number(m[7]) : 0;
  const sign = m[8] === "-" ? -1 : 1;
  const offH = m[9] === undefined ? 0 : Number(m[9]);
  const offM = m[10] === undefined ? 0 : Number(m[10]);
  if (y === undefined || mo === undefined || d === undefined) return undefined;
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth) return undefined;
  if (h > 23 || mi > 59 || s > 59 || offH > 23 || offM > 59) return undefined;
  const utc = Date.UTC(y, mo - 1, d, h, mi, s) + Math.floor(fraction * 1000);
  return new Date(utc - sign * (offH * 60 + offM) * 60_000);
}
