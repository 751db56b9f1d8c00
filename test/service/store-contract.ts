import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import {
  ApiKeySchema,
  KeyKind,
  WorkspaceSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
import { GuardrailSchema, StringListSchema } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { defaultGuardrailId, hashSecret, newId } from "../../services/common/ids.js";
import type { Admission } from "../../services/common/store/admission.js";
import { ORG_SCOPE, type Store } from "../../services/common/store/types.js";
import { nowTimestamp } from "../../services/common/time.js";

function workspace(slug: string) {
  const id = newId();
  return create(WorkspaceSchema, {
    id,
    name: slug,
    slug,
    defaultGuardrailId: defaultGuardrailId(id),
    createdAt: nowTimestamp(),
  });
}

function guardrail(workspaceId: string, name = "g") {
  return create(GuardrailSchema, { id: newId(), workspaceId, name, createdAt: nowTimestamp() });
}

function key(workspaceId: string, member = "") {
  return create(ApiKeySchema, {
    hash: hashSecret(newId()),
    name: "k",
    kind: workspaceId === ORG_SCOPE ? KeyKind.MANAGEMENT : KeyKind.STANDARD,
    workspaceId: workspaceId === ORG_SCOPE ? "" : workspaceId,
    memberUserId: member,
    createdAt: nowTimestamp(),
  });
}

function assignment(subject: string, guardrailId: string, workspaceId: string) {
  return {
    id: newId(),
    subject,
    guardrailId,
    workspaceId,
    assignedBy: "t",
    createdAtMs: Date.now(),
  };
}

/** One contract, every implementation: the embedded store must behave exactly like Redis. */
export function contract(name: string, open: () => Promise<Store>, reset: () => Promise<void>) {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      await reset();
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    it("bootstraps the default workspace once and never recreates it after deletion", async () => {
      const first = workspace("default");
      expect(await store.bootstrapDefaultWorkspace(first)).to.equal(first.id);
      expect(await store.bootstrapDefaultWorkspace(workspace("default"))).to.equal(first.id);
      expect(await store.deleteWorkspace(first.id)).to.equal(true);
      expect(await store.defaultWorkspaceId()).to.equal(undefined);
      expect(await store.bootstrapDefaultWorkspace(workspace("default"))).to.equal(undefined);
    });

    it("keeps workspace slugs unique and frees a slug on rename", async () => {
      const a = workspace("alpha");
      expect(await store.createWorkspace(a)).to.equal("ok");
      expect(await store.createWorkspace(workspace("alpha"))).to.equal("slug-taken");
      a.slug = "beta";
      expect(await store.updateWorkspace(a, "alpha")).to.equal("ok");
      expect(await store.workspaceIdBySlug("beta")).to.equal(a.id);
      expect(await store.workspaceIdBySlug("alpha")).to.equal(undefined);
      expect(await store.createWorkspace(workspace("alpha"))).to.equal("ok");
    });

    it("writes a guardrail only at the expected version", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      expect(await store.putGuardrail(g, 1)).to.equal("conflict");
      expect(await store.putGuardrail(g, 0)).to.equal("ok");
      expect(await store.putGuardrail(g, 0)).to.equal("conflict");
      g.name = "second";
      expect(await store.putGuardrail(g, 1)).to.equal("ok");
      const got = await store.getGuardrail(ws.id, g.id);
      expect(got?.version).to.equal(2);
      expect(got?.value.name).to.equal("second");
      expect(await store.guardrailWorkspace(g.id)).to.equal(ws.id);
    });

    it("refuses a guardrail in a missing workspace", async () => {
      expect(await store.putGuardrail(guardrail(newId()), 0)).to.equal("missing-workspace");
    });

    it("resolves a default guardrail id before it is materialized", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      expect(await store.guardrailWorkspace(defaultGuardrailId(ws.id))).to.equal(ws.id);
      expect(await store.getGuardrail(ws.id, defaultGuardrailId(ws.id))).to.equal(undefined);
    });

    it("pages guardrails within and across workspaces", async () => {
      const w1 = workspace("w1");
      const w2 = workspace("w2");
      await store.createWorkspace(w1);
      await store.createWorkspace(w2);
      for (let i = 0; i < 3; i++) await store.putGuardrail(guardrail(w1.id, `a${i}`), 0);
      for (let i = 0; i < 2; i++) await store.putGuardrail(guardrail(w2.id, `b${i}`), 0);
      const all = await store.listGuardrails(undefined, 2, 2);
      expect(all.total).to.equal(5);
      expect(all.items).to.have.length(2);
      const only = await store.listGuardrails(w2.id, 0, 50);
      expect(only.items.map((g) => g.name).sort()).to.deep.equal(["b0", "b1"]);
    });

    it("keeps one guardrail per key, replaces on reassignment and clears on delete", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g1 = guardrail(ws.id);
      const g2 = guardrail(ws.id);
      await store.putGuardrail(g1, 0);
      await store.putGuardrail(g2, 0);
      const k = key(ws.id);
      expect(await store.createKey(ws.id, k)).to.equal("ok");
      expect(await store.assign("key", [assignment(k.hash, g1.id, ws.id)])).to.deep.equal({
        assigned: 1,
      });
      expect(await store.assign("key", [assignment(k.hash, g1.id, ws.id)])).to.deep.equal({
        assigned: 0,
      });
      expect(await store.assign("key", [assignment(k.hash, g2.id, ws.id)])).to.deep.equal({
        assigned: 1,
      });
      expect((await store.getKey(ws.id, k.hash))?.guardrailId).to.equal(g2.id);
      expect(await store.unassign("key", ws.id, g1.id, [k.hash])).to.equal(0);
      expect((await store.listAssignments("key", ws.id, g1.id, 0, 50)).total).to.equal(0);
      expect(await store.deleteGuardrail(ws.id, g2.id)).to.equal(true);
      expect((await store.getKey(ws.id, k.hash))?.guardrailId).to.equal("");
      expect(await store.assign("key", [assignment(k.hash, g2.id, ws.id)])).to.equal("missing");
    });

    it("skips key assignments for keys that do not exist", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      await store.putGuardrail(g, 0);
      const result = await store.assign("key", [assignment(hashSecret("nope"), g.id, ws.id)]);
      expect(result).to.deep.equal({ assigned: 0 });
    });

    it("loads the governance of a key: key, member and workspace default guardrails", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const kg = guardrail(ws.id, "key");
      const mg = guardrail(ws.id, "member");
      const dg = guardrail(ws.id, "default");
      dg.id = defaultGuardrailId(ws.id);
      for (const g of [kg, mg, dg]) await store.putGuardrail(g, 0);
      const k = key(ws.id, "user-1");
      await store.createKey(ws.id, k);
      expect((await store.loadGovernance(k.hash))?.keyGuardrail).to.equal(undefined);
      await store.assign("key", [assignment(k.hash, kg.id, ws.id)]);
      await store.assign("member", [assignment("user-1", mg.id, ws.id)]);
      const gov = await store.loadGovernance(k.hash);
      expect(gov?.key.hash).to.equal(k.hash);
      expect(gov?.keyGuardrail?.name).to.equal("key");
      expect(gov?.memberGuardrail?.name).to.equal("member");
      expect(gov?.defaultGuardrail?.name).to.equal("default");
      expect(await store.loadGovernance(hashSecret("unknown"))).to.equal(undefined);
    });

    it("keeps management keys in the organization scope and key hashes unique", async () => {
      const k = key(ORG_SCOPE);
      expect(await store.createKey(ORG_SCOPE, k)).to.equal("ok");
      expect(await store.createKey(ORG_SCOPE, k)).to.equal("exists");
      expect(await store.keyScope(k.hash)).to.equal(ORG_SCOPE);
      expect(await store.createKey(newId(), key(newId()))).to.equal("missing-workspace");
      const gov = await store.loadGovernance(k.hash);
      expect(gov?.defaultGuardrail).to.equal(undefined);
    });

    it("deletes a workspace with its guardrails, keys and assignments", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      await store.putGuardrail(g, 0);
      const k = key(ws.id);
      await store.createKey(ws.id, k);
      await store.assign("key", [assignment(k.hash, g.id, ws.id)]);
      expect(await store.deleteWorkspace(ws.id)).to.equal(true);
      expect(await store.getWorkspace(ws.id)).to.equal(undefined);
      expect(await store.guardrailWorkspace(g.id)).to.equal(undefined);
      expect(await store.keyScope(k.hash)).to.equal(undefined);
      expect(await store.loadGovernance(k.hash)).to.equal(undefined);
      expect((await store.listAssignments("key", undefined, undefined, 0, 50)).total).to.equal(0);
      expect(await store.deleteWorkspace(ws.id)).to.equal(false);
      expect(await store.workspaceIdBySlug("w")).to.equal(undefined);
    });

    it("stores copies: mutating a returned object never changes stored state", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      g.allowedModels = create(StringListSchema, { values: ["a/b"] });
      await store.putGuardrail(g, 0);
      g.allowedModels.values.push("mutated");
      const got = await store.getGuardrail(ws.id, g.id);
      got?.value.allowedModels?.values.push("mutated-again");
      const again = await store.getGuardrail(ws.id, g.id);
      expect(again?.value.allowedModels?.values).to.deep.equal(["a/b"]);
    });

    it("admits atomically: rate limit, credits, key limit and budgets, and a refusal changes nothing", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const base: Admission = {
        scope: ws.id,
        keyHash: "k".repeat(64),
        rate: { limit: 3, windowMs: 60_000, nowMs: Date.now() },
        creditMicros: 400,
        keyLimitMicros: 10_000,
        keyMicros: 400,
        budgets: [
          {
            guardrailId: "g1",
            window: "daily:x",
            limitMicros: 1_000,
            amountMicros: 400,
            ttlSeconds: 60,
          },
        ],
      };
      // Unmetered workspace: credits do not apply until a balance is set.
      expect(await store.admit(base)).to.deep.equal({ ok: true, metered: false });
      expect(await store.getCredits(ws.id)).to.equal(undefined);
      expect(await store.addCredits(ws.id, 500)).to.equal(500);
      expect(await store.admit(base)).to.deep.equal({ ok: true, metered: true });
      expect(await store.getCredits(ws.id)).to.equal(100);
      // Credits now short: 402 territory, and nothing else moved.
      const refused = await store.admit(base);
      expect(refused).to.deep.include({ ok: false, reason: "credits", balanceMicros: 100 });
      expect(await store.getSpend(ws.id, [{ guardrailId: "g1", window: "daily:x" }])).to.deep.equal(
        [800],
      );
      // Settling refunds the unused part of a reservation.
      await store.settle(
        base,
        {
          creditMicros: 100,
          keyMicros: 100,
          budgets: [{ guardrailId: "g1", window: "daily:x", amountMicros: 100 }],
        },
        true,
      );
      expect(await store.getCredits(ws.id)).to.equal(400);
      expect(await store.getSpend(ws.id, [{ guardrailId: "g1", window: "daily:x" }])).to.deep.equal(
        [500],
      );
      // The budget refuses what would overshoot it.
      const big = {
        ...base,
        creditMicros: 0,
        keyMicros: 0,
        budgets: [{ ...base.budgets[0], amountMicros: 600 }],
      } as Admission;
      expect(await store.admit(big)).to.deep.include({
        ok: false,
        reason: "budget",
        guardrailId: "g1",
      });
      // Refused requests did not count: the third admitted request of the minute is the last one.
      const free = { ...base, creditMicros: 0, keyMicros: 0, budgets: [] };
      expect(await store.admit(free)).to.deep.include({ ok: true });
      const limited = await store.admit(free);
      expect(limited).to.deep.include({ ok: false, reason: "rate-limit" });
      expect((limited as { retryAfterMs: number }).retryAfterMs).to.be.within(1, 60_000);
    });

    it("refuses a request over the key's own limit", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const a: Admission = {
        scope: ws.id,
        keyHash: "h".repeat(64),
        creditMicros: 0,
        keyLimitMicros: 500,
        keyMicros: 300,
        budgets: [],
      };
      expect(await store.admit(a)).to.deep.equal({ ok: true, metered: false });
      expect(await store.admit(a)).to.deep.include({
        ok: false,
        reason: "key-limit",
        spentMicros: 300,
      });
    });

    it("announces changes of a workspace to invalidation listeners", async () => {
      const seen: string[] = [];
      const off = store.onInvalidate((scope) => seen.push(scope));
      try {
        // Give a Redis subscription time to be established before the change.
        await new Promise((r) => setTimeout(r, 100));
        const ws = workspace("w");
        await store.createWorkspace(ws);
        await store.putGuardrail(guardrail(ws.id), 0);
        for (let i = 0; i < 50 && seen.filter((s) => s === ws.id).length < 2; i++) {
          await new Promise((r) => setTimeout(r, 20));
        }
        expect(seen.filter((s) => s === ws.id).length).to.be.at.least(2);
      } finally {
        off();
      }
    });
  });
}
