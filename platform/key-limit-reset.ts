import { type KeyLimitReset, KeyLimitResetSchema } from "../gen/railgate/account/v1/account_pb.js";
import { type EnumApiName, enumNames } from "./enum-names.js";
import type { WindowInterval } from "./windows.js";

/**
 * A key's limit_reset (railgate.account.v1.KeyLimitReset) as the API spells it (OpenRouter's
 * values: "daily", "weekly", "monthly"). Its windows are the budget windows (platform/windows.ts):
 * the type checker holds the two enums to the same names, since a window is chosen by name.
 */
export type KeyLimitResetName = EnumApiName<typeof KeyLimitReset>;

export const KEY_LIMIT_RESETS = enumNames<typeof KeyLimitReset>(KeyLimitResetSchema);

/**
 * The window a key's limit is checked in: the budget window of the same name; undefined for an
 * all-time limit. Typed as a window, so a limit_reset the windows do not have fails to compile.
 */
export function keyLimitWindow(v: KeyLimitReset | undefined): WindowInterval | undefined {
  return KEY_LIMIT_RESETS.name(v);
}
