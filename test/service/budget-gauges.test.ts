import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import { defaultGuardrailId, newId } from "../../domain/ids.js";
import { type GuardrailBudgetSample, trackGuardrailBudgets } from "../../domain/metrics.js";
import { utcDay } from "../../domain/windows.js";
import { WorkspaceSchema } from "../../gen/railgate/account/v1/account_pb.js";
import { GuardrailSchema, ResetInterval } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type MetricsServer,
  startMetricsServer,
} from "../../platform/observability/metrics-server.js";
import { nowTimestamp } from "../../platform/time.js";
import { cachedGuardrailBudgets } from "../../services/guardrail/budget-gauges.js";
import type { GuardrailSpend, GuardrailSpendQuery } from "../../store/admission.js";
import { MemoryStore } from "../../store/memory-store.js";
import { RedisStore } from "../../store/redis-store.js";
import type { Store } from "../../store/types.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";

/** A workspace with one guardrail of $1 a day; returns their ids. */
async function budgeted(store: Store): Promise<{ ws: string; g: string }> {
  const ws = newId();
  await store.createWorkspace(
    create(WorkspaceSchema, {
      id: ws,
      name: ws,
      slug: `w-${ws.slice(0, 8)}`,
      defaultGuardrailId: defaultGuardrailId(ws),
      createdAt: nowTimestamp(),
    }),
  );
  const g = newId();
  expect(
    await store.createGuardrail(
      create(GuardrailSchema, {
        id: g,
        workspaceId: ws,
        name: "daily dollar",
        limitUsd: 1,
        resetInterval: ResetInterval.DAILY,
        createdAt: nowTimestamp(),
      }),
    ),
  ).to.equal("ok");
  return { ws, g };
}

/** Charges `micros` to one key under the guardrail today. */
async function charge(store: Store, ws: string, g: string, entity: string, micros: number) {
  const today = utcDay(new Date());
  const admitted = await store.admit({
    scope: ws,
    keyHash: "k".repeat(64),
    creditMicros: 0,
    keyMicros: 0,
    budgets: [
      {
        guardrailId: g,
        entity,
        firstDay: today,
        day: today,
        limitMicros: 1e6,
        amountMicros: micros,
      },
    ],
  });
  expect(admitted).to.deep.include({ ok: true });
}

function find(samples: GuardrailBudgetSample[] | undefined, g: string) {
  return samples?.find((s) => s.guardrailId === g);
}

/** Counts the store's readings of the workspaces, where each reading starts. */
function counting<S extends Store>(store: S): { store: S; readings: () => number } {
  let n = 0;
  const list = store.listWorkspaces.bind(store);
  store.listWorkspaces = (offset, limit) => {
    if (offset === 0) n++;
    return list(offset, limit);
  };
  return { store, readings: () => n };
}

/** A memory store whose spend reads fail, as a Redis that stopped answering mid-scrape. */
class SpendUnreadable extends MemoryStore {
  override async getGuardrailSpend(
    _scope: string,
    _queries: GuardrailSpendQuery[],
  ): Promise<GuardrailSpend[]> {
    throw new Error("the store did not answer");
  }
}

describe("guardrail budget gauges: read from the store at scrape time", () => {
  let redis: ThrowawayRedis;
  const untrack: (() => void)[] = [];
  before(async () => {
    redis = await startRedis();
  });
  afterEach(() => {
    for (const u of untrack.splice(0)) u();
  });
  after(async () => {
    await redis?.stop();
  });

  for (const kind of ["redis", "memory"] as const) {
    it(`${kind}: one store reading per TTL, shared by the scrapes within it`, async () => {
      const { store, readings } = counting(
        kind === "redis" ? new RedisStore(redis.client(), "rgtest") : new MemoryStore(),
      );
      try {
        const { ws, g } = await budgeted(store);
        await charge(store, ws, g, "key:a", 250_000);
        await charge(store, ws, g, "member:m", 100_000);
        const hourly = cachedGuardrailBudgets(store, 3_600_000);
        const first = await hourly();
        expect(find(first, g)).to.deep.equal({
          workspaceId: ws,
          guardrailId: g,
          keySpendUsd: 0.25,
          memberSpendUsd: 0.1,
          entities: 2,
          budget: { limitUsd: 1, remainingUsd: 0.75 },
        });
        await charge(store, ws, g, "key:a", 250_000);
        // Within the TTL: the same reading, without asking the store again.
        const before = readings();
        expect(await hourly()).to.equal(first);
        expect(readings()).to.equal(before);
        const fresh = await cachedGuardrailBudgets(store, 0)();
        expect(find(fresh, g)?.keySpendUsd).to.equal(0.5);
        expect(find(fresh, g)?.budget?.remainingUsd).to.equal(0.5);
        expect(readings()).to.equal(before + 1);
      } finally {
        await store.close();
      }
    });
  }

  it("a store that fails is skipped: the rest of /metrics is still served", async () => {
    const good = new RedisStore(redis.client(), "rgtest");
    const bad = new SpendUnreadable();
    let server: MetricsServer | undefined;
    try {
      const ok = await budgeted(good);
      await charge(good, ok.ws, ok.g, "key:a", 30_000);
      const failing = await budgeted(bad);
      untrack.push(trackGuardrailBudgets(cachedGuardrailBudgets(good, 0)));
      untrack.push(trackGuardrailBudgets(cachedGuardrailBudgets(bad, 0)));
      server = await startMetricsServer(0, "127.0.0.1");
      const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(res.status).to.equal(200);
      const text = await res.text();
      expect(text).to.include("# TYPE railgate_http_requests_total counter");
      expect(text).to.include(
        `railgate_guardrail_spend_usd{workspace_id="${ok.ws}",guardrail_id="${ok.g}",entity="key"} 0.03`,
      );
      expect(text).to.include(
        `railgate_guardrail_budget_remaining_usd{workspace_id="${ok.ws}",guardrail_id="${ok.g}"} 0.97`,
      );
      expect(text).to.not.include(failing.ws);
    } finally {
      await server?.close();
      await good.close();
      await bad.close();
    }
  });
});
