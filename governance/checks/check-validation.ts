import { CHECK_OUTCOMES, quotedRegionNames, regionName } from "../../domain/enums.js";
import { GUARDRAIL_LIMITS as LIMITS } from "../../domain/limits.js";
import type { GuardrailCheckList } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { Region } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { quote } from "../../platform/quote.js";
import { invalidArgument } from "../../platform/rpc/errors.js";

function fail(message: string): never {
  throw invalidArgument(message);
}

function length(at: string, value: string | undefined, max: number, required: boolean): void {
  if (value === undefined) {
    if (required) fail(`${at} is required (1 to ${max} characters)`);
    return;
  }
  if (required && value.trim().length === 0)
    fail(`${at} must be 1 to ${max} characters and not blank`);
  if ([...value].length > max) fail(`${at} must be at most ${max} characters`);
}

/**
 * A guardrail's checks as they would be stored: named once each, each with a model to ask
 * for and the outcome it must get. An empty list is "no checks".
 */
export function validateChecks(checks: GuardrailCheckList | undefined): void {
  if (!checks) return;
  if (checks.values.length > LIMITS.checksMax)
    fail(`checks may have at most ${LIMITS.checksMax} elements`);
  const names = new Set<string>();
  checks.values.forEach((c, i) => {
    const at = `checks[${i}]`;
    length(`${at}.name`, c.name || undefined, LIMITS.checkNameMax, true);
    if (names.has(c.name)) fail(`${at}.name ${quote(c.name)} appears more than once`);
    names.add(c.name);
    const r = c.request;
    if (!r) fail(`${at}.request is required (an object with at least a model)`);
    length(`${at}.request.model`, r.model || undefined, LIMITS.listItemMax, true);
    length(`${at}.request.input`, r.input, LIMITS.checkInputMax, false);
    length(`${at}.request.voice`, r.voice, LIMITS.listItemMax, false);
    length(`${at}.request.provider`, r.provider, LIMITS.listItemMax, false);
    if (r.region !== Region.UNSPECIFIED && regionName(r.region) === undefined)
      fail(`${at}.request.region must be one of ${quotedRegionNames()}`);
    if (CHECK_OUTCOMES.name(c.expect) === undefined)
      fail(`${at}.expect is required and must be one of ${CHECK_OUTCOMES.quoted}`);
    length(`${at}.reason`, c.reason, LIMITS.checkReasonMax, false);
    if (c.reason !== undefined && CHECK_OUTCOMES.name(c.expect) !== "refused")
      fail(`${at}.reason is only taken with expect "refused"`);
  });
}
