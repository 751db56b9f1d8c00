import { expect } from "chai";
import { newId, newOrderedId } from "../../domain/ids.js";
import { applyConfigEntries } from "../../store/config-outbox/apply-sql.js";
import { readDurableConfig } from "../../store/config-outbox/durable-config.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { ensureDayPartitions } from "../../store/request-log/partitions.js";
import { onBothDatabases } from "../kit/databases.js";

const KEY = "k".repeat(64);
const DAY_MS = 86_400_000;

async function generation(
  db: SqlDatabase,
  workspaceId: string,
  at: Date,
  costUsd: number,
  byok: boolean,
): Promise<void> {
  await ensureDayPartitions(db, "generations", [at.getTime()]);
  await db.query(
    `INSERT INTO generations (id, created_at, workspace_id, key_hash, model, provider, status,
       byok, cost_usd, characters, filter_actions, record)
     VALUES ($1, $2, $3, $4, 'm', 'p', 'completed', $5, $6, 10, 0, $7)`,
    [newId(), at, workspaceId, KEY, byok, costUsd, new Uint8Array()],
  );
}

onBothDatabases("configuration refill: counters from the ledger and the request log", (getDb) => {
  it("a balance is the ledger less the non-BYOK cost charged since the first top-up; key usage counts every record", async () => {
    const db = getDb();
    const ws = newId();
    // Midday, so "a second ago" is always today whatever the hour the test runs.
    const now = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS / 2);
    const topUpAt = new Date(now.getTime() - 3 * DAY_MS);
    for (const [amountMicros, at] of [
      [10_000_000, topUpAt],
      [-1_000_000, now],
    ] as const) {
      await applyConfigEntries(db, [
        {
          scope: ws,
          stamp: at.getTime() * 1000,
          event: {
            credits: { id: newOrderedId(), workspaceId: ws, amountMicros, at: at.toISOString() },
          },
          reply: [],
          snapshots: [],
        },
      ]);
    }
    // Before the workspace was metered: spent on the key, never drawn from credits.
    await generation(db, ws, new Date(topUpAt.getTime() - DAY_MS), 0.5, false);
    await generation(db, ws, new Date(now.getTime() - 1000), 1.25, false);
    await generation(db, ws, new Date(now.getTime() - 1000), 2, true);

    const config = await readDurableConfig(db, now);
    expect(config.credits.find((c) => c.workspaceId === ws)).to.deep.equal({
      workspaceId: ws,
      addedMicros: 9_000_000,
      spentMicros: 1_250_000,
    });
    const usage = config.usage.find((u) => u.workspaceId === ws);
    expect(usage?.creditTotalMicros).to.equal(1_750_000);
    expect(usage?.byokTotalMicros).to.equal(2_000_000);
    const daily = usage?.windows.find((w) => w.interval === "daily");
    expect(daily).to.deep.include({ creditMicros: 1_250_000, byokMicros: 2_000_000 });
  });
});
