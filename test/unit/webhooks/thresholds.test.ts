import { expect } from "chai";
import {
  type AlertWebhook,
  creditAlerts,
  type LimitReading,
  reachedThresholds,
  thresholdAlerts,
} from "../../../governance/alerts/thresholds.js";

const WINDOW = {
  interval: "daily" as const,
  id: "daily:2026-11-26",
  start: new Date("2026-11-26T00:00:00Z"),
  end: new Date("2026-11-27T00:00:00Z"),
};

function reading(spentMicros: number, over: Partial<LimitReading> = {}): LimitReading {
  return {
    scope: "api_key",
    guardrailId: "g1",
    keyHash: "k1",
    member: null,
    spentMicros,
    limitMicros: 10_000_000,
    window: WINDOW,
    ...over,
  };
}

const HOOK: AlertWebhook = {
  id: "h1",
  workspaceId: "w",
  thresholdsPct: [50, 80, 100],
  creditsBelowUsd: null,
};
const NOW = new Date("2026-11-26T10:00:00Z");

describe("webhooks: threshold rules", () => {
  it("a threshold is reached at exactly pct% of the limit, in integer micro-dollars", () => {
    expect(reachedThresholds(reading(4_999_999), [50, 80, 100])).to.deep.equal([]);
    expect(reachedThresholds(reading(5_000_000), [50, 80, 100])).to.deep.equal([50]);
    expect(reachedThresholds(reading(8_000_000), [50, 80, 100])).to.deep.equal([50, 80]);
    expect(reachedThresholds(reading(10_000_000), [50, 80, 100])).to.deep.equal([50, 80, 100]);
  });

  it("a guardrail policy's budget names the policy and its type beside the guardrail id", () => {
    const [alert] = thresholdAlerts("w", reading(5_000_000, { policyId: "g1" }), [HOOK], NOW);
    expect(alert?.event.data).to.deep.include({
      guardrail_id: "g1",
      policy_id: "g1",
      policy_type: "budget",
    });
  });

  it("a limit of 0 has no percentages", () => {
    expect(reachedThresholds(reading(5, { limitMicros: 0 }), [50])).to.deep.equal([]);
  });

  it("each event names its limit, window and spend; once keys differ by pct, entity and window", () => {
    const alerts = thresholdAlerts("w", reading(8_500_000), [HOOK], NOW);
    expect(alerts.map((a) => a.event.data.threshold_pct)).to.deep.equal([50, 80]);
    const [first] = alerts;
    expect(first?.event).to.include({ type: "budget.threshold", workspace_id: "w" });
    expect(first?.event.id).to.match(/^evt_/);
    expect(first?.event.data).to.deep.equal({
      guardrail_id: "g1",
      policy_id: null,
      policy_type: null,
      key_hash: "k1",
      member: null,
      scope: "api_key",
      threshold_pct: 50,
      spend_usd: 8.5,
      limit_usd: 10,
      window: {
        interval: "daily",
        start: "2026-11-26T00:00:00.000Z",
        end: "2026-11-27T00:00:00.000Z",
      },
      balance_usd: null,
      credits_below_usd: null,
      shadow: null,
    });
    expect(first?.keepUntil?.toISOString()).to.equal("2026-11-27T00:00:00.000Z");
    const keys = new Set([
      ...alerts.map((a) => a.onceKey),
      ...thresholdAlerts(
        "w",
        reading(8_500_000, { keyHash: null, member: "m1", scope: "member" }),
        [HOOK],
        NOW,
      ).map((a) => a.onceKey),
      ...thresholdAlerts(
        "w",
        reading(8_500_000, { window: { ...WINDOW, id: "daily:2026-11-27" } }),
        [HOOK],
        NOW,
      ).map((a) => a.onceKey),
    ]);
    expect(keys.size).to.equal(6);
  });

  it("credits.low fires below the amount, once per credit epoch (a top-up starts another)", () => {
    const hooks: AlertWebhook[] = [
      { ...HOOK, creditsBelowUsd: 5 },
      { ...HOOK, id: "h2", creditsBelowUsd: null },
    ];
    expect(creditAlerts("w", 5_000_000, 20_000_000, hooks, NOW)).to.deep.equal([]);
    const [low, ...rest] = creditAlerts("w", 4_999_999, 20_000_000, hooks, NOW);
    expect(rest).to.deep.equal([]);
    expect(low?.webhookId).to.equal("h1");
    expect(low?.event.type).to.equal("credits.low");
    expect(low?.event.data).to.include({ balance_usd: 4.999999, credits_below_usd: 5 });
    const later = creditAlerts("w", 1_000_000, 20_000_000, hooks, NOW)[0];
    const afterTopUp = creditAlerts("w", 1_000_000, 30_000_000, hooks, NOW)[0];
    expect(later?.onceKey).to.equal(low?.onceKey);
    expect(afterTopUp?.onceKey).to.not.equal(low?.onceKey);
  });
});
