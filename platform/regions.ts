import { type Region, RegionSchema } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import { type EnumApiName, enumNames } from "./enum-names.js";

/**
 * The ingress regions, one gateway listener each. The proto enum
 * (railgate.guardrail.v1.Region) is their one definition: the names the JSON
 * API, the configuration and the caller headers use are its values' names in
 * lower case ("REGION_EUROPE" -> "europe"), so a region added to the proto
 * reaches every surface, and the type below makes each place that keys
 * something by region (ports, listeners) name it. It lives in platform/
 * because configuration and caller authentication read it as well as policy.
 */
export type RegionName = EnumApiName<typeof Region>;

const REGIONS = enumNames<typeof Region>(RegionSchema);

/** Every region, in the proto's order. */
export const REGION_NAMES: readonly RegionName[] = REGIONS.names;

export function isRegionName(s: string): s is RegionName {
  return REGIONS.is(s);
}

/** The name of an enum value, or undefined for UNSPECIFIED and numbers no region has. */
export function regionName(value: Region): RegionName | undefined {
  return REGIONS.name(value);
}

export function regionValue(name: RegionName): Region {
  return REGIONS.value(name);
}

/** The names quoted for a message: `"global", "europe", "us"`, or `... "europe" or "us"`. */
export function quotedRegionNames(lastSeparator: ", " | " or " = ", "): string {
  const quoted = REGION_NAMES.map((n) => `"${n}"`);
  return `${quoted.slice(0, -1).join(", ")}${lastSeparator}${quoted.at(-1)}`;
}
