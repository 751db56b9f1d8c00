import { create } from "@bufbuild/protobuf";
import {
  type ApiKey,
  type KeyUsage,
  KeyUsageSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
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
