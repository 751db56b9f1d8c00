import {
  FilterAction,
  Region,
  ResetInterval,
  ScanScope,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { quote } from "../../services/common/quote.js";
import { badRequest } from "./fields.js";

/** A two-way map between the API's lowercase strings and a protobuf enum. */
function enumMap<E extends number>(field: string, pairs: [string, E][]) {
  const byName = new Map<string, E>(pairs);
  const byValue = new Map<number, string>(pairs.map(([k, v]) => [v, k]));
  const names = pairs.map(([k]) => `"${k}"`).join(", ");
  return {
    /** The API's names, in order: the document's enum for the field. */
    names: pairs.map(([k]) => k) as readonly string[],
    parse(value: string, at = field): E {
      const v = byName.get(value);
      if (v === undefined) throw badRequest(`${at} must be one of ${names}, got ${quote(value)}`);
      return v;
    },
    name(value: number): string | null {
      return byValue.get(value) ?? null;
    },
  };
}

export const regions = enumMap<Region>("allowed_data_regions", [
  ["global", Region.GLOBAL],
  ["europe", Region.EUROPE],
  ["us", Region.US],
]);

export const resetIntervals = enumMap<ResetInterval>("reset_interval", [
  ["daily", ResetInterval.DAILY],
  ["weekly", ResetInterval.WEEKLY],
  ["monthly", ResetInterval.MONTHLY],
]);

export const filterActions = enumMap<FilterAction>("action", [
  ["block", FilterAction.BLOCK],
  ["redact", FilterAction.REDACT],
  ["flag", FilterAction.FLAG],
]);

export const scanScopes = enumMap<ScanScope>("scan_scope", [
  ["user_only", ScanScope.USER_ONLY],
  ["all_messages", ScanScope.ALL_MESSAGES],
]);
