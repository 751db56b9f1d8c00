import { create } from "@bufbuild/protobuf";
import { REGION_NAMES, regionValue } from "../../domain/enums.js";
import {
  type ApiKey,
  type KeyUsage,
  KeyUsageSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
import type { Region } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { fromMicros } from "../../governance/policy/money.js";
import { ORG_SCOPE, type Store } from "../../store/types.js";

/** What a key spent (settled requests), read from its counters in the key's own scope. */
export async function readKeyUsage(store: Store, key: ApiKey, now: Date): Promise<KeyUsage> {
  const u = await store.getKeyUsage(key.workspaceId || ORG_SCOPE, key.hash, now);
  return create(KeyUsageSchema, {
    usageUsd: fromMicros(u.totalMicros),
    usageDailyUsd: fromMicros(u.dailyMicros),
    usageWeeklyUsd: fromMicros(u.weeklyMicros),
    usageMonthlyUsd: fromMicros(u.monthlyMicros),
    byokUsageUsd: fromMicros(u.byokTotalMicros),
    byokUsageDailyUsd: fromMicros(u.byokDailyMicros),
    byokUsageWeeklyUsd: fromMicros(u.byokWeeklyMicros),
    byokUsageMonthlyUsd: fromMicros(u.byokMonthlyMicros),
  });
}

/**
 * The ingress regions a key's requests may arrive through: the intersection of the
 * allowed_data_regions of every guardrail governing it (key, member, workspace default),
 * every region when none restricts them.
 */
export async function keyRegions(store: Store, keyHash: string): Promise<Region[]> {
  const gov = await store.loadGovernance(keyHash);
  const guardrails = [gov?.keyGuardrail, gov?.memberGuardrail, gov?.defaultGuardrail];
  let allowed = REGION_NAMES.map(regionValue);
  for (const g of guardrails) {
    const listed = g?.allowedDataRegions?.values;
    if (listed) allowed = allowed.filter((r) => listed.includes(r));
  }
  return allowed;
}
