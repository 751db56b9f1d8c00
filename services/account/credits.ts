import { invalidArgument } from "../common/errors.js";
import type { Store } from "../common/store/types.js";
import { fromMicros, toMicros } from "../policy/money.js";

/** At most this much in one top-up, so a typo cannot make a workspace effectively unmetered. */
const MAX_TOP_UP_USD = 1_000_000;

export async function readCredits(store: Store, workspaceId: string): Promise<number | undefined> {
  const micros = await store.getCredits(workspaceId);
  return micros === undefined ? undefined : fromMicros(micros);
}

export async function addCredits(
  store: Store,
  workspaceId: string,
  amountUsd: number,
): Promise<number> {
  if (!Number.isFinite(amountUsd) || amountUsd === 0 || Math.abs(amountUsd) > MAX_TOP_UP_USD) {
    throw invalidArgument(
      `amount_usd must be a non-zero number from -${MAX_TOP_UP_USD} to ${MAX_TOP_UP_USD}`,
    );
  }
  return fromMicros(await store.addCredits(workspaceId, toMicros(amountUsd)));
}
