import type { Detector, Pretested, Span } from "./detector.js";
import { builtinRegex, findAll, standsAlone } from "./regex.js";

/**
 * US Social Security numbers written ddd-dd-dddd or ddd dd dddd (one
 * separator throughout), excluding numbers the SSA never issues: area 000,
 * 666 or 900-999, group 00, serial 0000. Not caught: nine digits without
 * separators (indistinguishable from any other 9-digit number).
 */
const SSN = builtinRegex(String.raw`\b(?:\d{3}-\d{2}-\d{4}|\d{3} \d{2} \d{4})\b`);

export function isIssuableSsn(area: string, group: string, serial: string): boolean {
  return (
    area !== "000" && area !== "666" && !area.startsWith("9") && group !== "00" && serial !== "0000"
  );
}

/** The three groups of a matched SSN, whichever separator it uses. */
const GROUPS = /^(\d{3})[- ](\d{2})[- ](\d{4})$/;

export const ssnDetector: Detector = {
  regexes: [SSN],
  find(text: string, pretested?: Pretested): Span[] {
    const spans: Span[] = [];
    for (const { start, end } of findAll(SSN, text, pretested)) {
      const [, area, group, serial] = GROUPS.exec(text.slice(start, end)) ?? [];
      if (area === undefined || group === undefined || serial === undefined) continue;
      if (isIssuableSsn(area, group, serial) && standsAlone(text, start, end, "-. "))
        spans.push({ start, end });
    }
    return spans;
  },
};
