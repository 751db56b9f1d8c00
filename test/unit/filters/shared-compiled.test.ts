import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import {
  FilterAction,
  type Guardrail,
  GuardrailSchema,
} from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { SharedCompiledFilters } from "../../../governance/filters/index.js";
import { effectivePolicy } from "../../../governance/policy/effective-policy.js";
import type { AccountSettings, GoverningGuardrail } from "../../../governance/policy/types.js";

const OPEN: AccountSettings = { allowSafetyRetentionGoogle: true, allowSafetyRetentionOther: true };

const guardrail = (id: string, patterns: string[]): Guardrail =>
  create(GuardrailSchema, {
    id,
    name: id,
    workspaceId: "ws",
    contentFilters: {
      values: patterns.map((pattern) => ({ pattern, action: FilterAction.REDACT, label: "[X]" })),
    },
  });

/** What the governance cache compiles for a key governed by these guardrails. */
const filtersOf = (shared: SharedCompiledFilters, ...governing: GoverningGuardrail[]) =>
  shared.get(effectivePolicy(governing, OPEN).filters);

describe("shared compiled filters", () => {
  const patterns = Array.from({ length: 100 }, (_, i) => `secret-${i}-\\d{4}`);

  it("gives every principal governed by the same guardrail the same compiled object", () => {
    const shared = new SharedCompiledFilters();
    const g = guardrail("g1", patterns);
    // 1,000 keys under one guardrail: one as a key guardrail, others through the workspace default.
    const first = filtersOf(shared, { source: "key", guardrail: g });
    for (let i = 0; i < 999; i++)
      expect(
        filtersOf(shared, { source: i % 2 ? "key" : "workspace_default", guardrail: g }),
      ).to.equal(first);
    expect(shared.compilations).to.equal(1);
    expect(first.apply([{ text: "it is secret-7-1234", role: "user" }]).parts[0]?.text).to.equal(
      "it is [X]",
    );
  });

  it("compiles a changed guardrail anew, and keeps serving the unchanged one", () => {
    const shared = new SharedCompiledFilters();
    const before = filtersOf(shared, { source: "key", guardrail: guardrail("g1", patterns) });
    const changed = guardrail("g1", [...patterns.slice(1), "changed-\\d+"]);
    const after = filtersOf(shared, { source: "key", guardrail: changed });
    expect(after).to.not.equal(before);
    expect(after.apply([{ text: "changed-1", role: "user" }]).parts[0]?.text).to.equal("[X]");
    expect(filtersOf(shared, { source: "key", guardrail: changed })).to.equal(after);
    expect(shared.compilations).to.equal(2);
  });

  it("is bounded: the least recently used set goes first", () => {
    const shared = new SharedCompiledFilters({ maxEntries: 2, maxWeight: 1_000_000 });
    const a = filtersOf(shared, { source: "key", guardrail: guardrail("a", ["a+"]) });
    const b = filtersOf(shared, { source: "key", guardrail: guardrail("b", ["b+"]) });
    expect(filtersOf(shared, { source: "key", guardrail: guardrail("a", ["a+"]) })).to.equal(a);
    filtersOf(shared, { source: "key", guardrail: guardrail("c", ["c+"]) });
    expect(shared.size).to.equal(2);
    // b was the least recently used: it was dropped and compiles again; a stayed.
    expect(filtersOf(shared, { source: "key", guardrail: guardrail("a", ["a+"]) })).to.equal(a);
    expect(filtersOf(shared, { source: "key", guardrail: guardrail("b", ["b+"]) })).to.not.equal(b);
    const heavy = new SharedCompiledFilters({ maxEntries: 100, maxWeight: 1_000 });
    for (const p of ["x+", "y+", "z+", "w+", "v+", "u+"])
      filtersOf(heavy, { source: "key", guardrail: guardrail(p, [p]) });
    expect(heavy.size).to.be.at.most(4);
  });

  it("does not keep a set that fails to compile", () => {
    const shared = new SharedCompiledFilters();
    expect(() =>
      shared.get([{ slug: "custom", action: "block", label: "", pattern: "(unclosed" }]),
    ).to.throw(/Invalid custom filter pattern/);
    expect(shared.size).to.equal(0);
  });
});
