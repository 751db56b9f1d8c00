import { expect } from "chai";
import { budgetWindow, utcDay } from "../../../domain/windows.js";
import { budgetCounters } from "../../../governance/policy/budget-counters.js";
import type { BudgetSpec } from "../../../governance/policy/types.js";

function budget(guardrailId: string, source: BudgetSpec["source"]): BudgetSpec {
  return {
    guardrailId,
    guardrailName: guardrailId,
    source,
    limitUsd: 5,
    interval: "daily",
    includeByok: false,
  };
}

const summary = (cs: ReturnType<typeof budgetCounters>) =>
  cs.map((c) => [c.budget.guardrailId, c.scope, c.entity]);

describe("budget counters (per entity)", () => {
  const all = [budget("k", "key"), budget("m", "member"), budget("d", "workspace_default")];

  it("a key of a member: default per member and per key, then member, then key (OpenRouter's order)", () => {
    expect(summary(budgetCounters(all, "h1", "u1"))).to.deep.equal([
      ["d", "workspace_default_member", "member:u1"],
      ["d", "workspace_default_key", "key:h1"],
      ["m", "member", "member:u1"],
      ["k", "api_key", "key:h1"],
    ]);
  });

  it("a key without a member has only its own counters", () => {
    expect(summary(budgetCounters(all, "h1", ""))).to.deep.equal([
      ["d", "workspace_default_key", "key:h1"],
      ["k", "api_key", "key:h1"],
    ]);
  });

  it("one guardrail governing a key twice charges each entity once", () => {
    const twice = [budget("d", "key"), budget("d", "workspace_default")];
    expect(summary(budgetCounters(twice, "h1", "u1"))).to.deep.equal([
      ["d", "workspace_default_member", "member:u1"],
      ["d", "workspace_default_key", "key:h1"],
    ]);
  });
});

describe("budget windows in UTC days", () => {
  it("day 0 is 1970-01-01; a window knows its first day and today", () => {
    expect(utcDay(new Date("1970-01-01T23:59:59.999Z"))).to.equal(0);
    expect(utcDay(new Date("1970-01-02T00:00:00.000Z"))).to.equal(1);
    // Wednesday 2026-03-18: the week began on Monday the 16th, the month on the 1st.
    const now = new Date("2026-03-18T10:00:00Z");
    const today = utcDay(now);
    expect(budgetWindow("daily", now)).to.deep.include({ firstDay: today, today });
    expect(budgetWindow("weekly", now)).to.deep.include({ firstDay: today - 2, today });
    expect(budgetWindow("monthly", now)).to.deep.include({ firstDay: today - 17, today });
  });
});
