import { clone, create } from "@bufbuild/protobuf";
import { expect } from "chai";
import { defaultGuardrailId, hashSecret, newId } from "../../domain/ids.js";
import { COUNT_LIMITS, type CountLimits } from "../../domain/limits.js";
import {
  ApiKeySchema,
  KeyKind,
  WorkspaceSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
import {
  type Guardrail,
  GuardrailSchema,
  ResetInterval,
  StringListSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { nowTimestamp } from "../../platform/time.js";
import type { Admission, Settlement } from "../../store/admission.js";
import { keyLimitCounter } from "../../store/key-usage.js";
import { isLimitReached } from "../../store/limits.js";
import { type GuardrailPatch, ORG_SCOPE, type Store } from "../../store/types.js";

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

/** Small limits, so the tests can reach them. */
const SMALL: CountLimits = {
  workspaces: 3,
  guardrailsPerWorkspace: 3,
  keysPerWorkspace: 3,
  managementKeys: 2,
  keyAssignmentsPerWorkspace: 3,
  memberAssignmentsPerWorkspace: 3,
};

/** A patch of the named fields from `next`, read at `read`. */
function patch(
  read: { value: Guardrail; version: number },
  change: (g: Guardrail) => void,
  fields: string[],
  unchanged: string[] = [],
): GuardrailPatch {
  const next = clone(GuardrailSchema, read.value);
  change(next);
  return {
    workspaceId: read.value.workspaceId,
    id: read.value.id,
    readVersion: read.version,
    fields,
    next,
    unchanged,
    read: read.value,
    materialize: false,
  };
}

/** One contract, every implementation: the embedded store must behave exactly like Redis. */
export function contract(
  name: string,
  open: (limits?: CountLimits) => Promise<Store>,
  reset: () => Promise<void>,
) {
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
      expect(await store.deleteWorkspace(first.id)).to.equal("ok");
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

    it("creates a guardrail once, at version 1", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      expect(await store.createGuardrail(g)).to.equal("ok");
      expect(await store.createGuardrail(g)).to.equal("exists");
      const got = await store.getGuardrail(ws.id, g.id);
      expect(got?.version).to.equal(1);
      expect(got?.value.version).to.equal(1n);
      expect(got?.value.name).to.equal("g");
      expect(await store.guardrailWorkspace(g.id)).to.equal(ws.id);
    });

    it("patches only the named fields, bumping the version", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      g.description = "before";
      g.allowedModels = create(StringListSchema, { values: ["a/b"] });
      await store.createGuardrail(g);
      const read = await store.getGuardrail(ws.id, g.id);
      if (!read) throw new Error("not stored");
      // A stale read (version 1) of other fields: no conflict, nothing of them is written.
      const first = await store.patchGuardrail(patch(read, (n) => (n.name = "renamed"), ["name"]));
      expect(first).to.include({ version: 2 });
      const second = await store.patchGuardrail(
        patch(read, (n) => (n.allowedModels = undefined), ["allowed_models"]),
      );
      expect(second).to.include({ version: 3 });
      const got = await store.getGuardrail(ws.id, g.id);
      expect(got?.value.name).to.equal("renamed");
      expect(got?.value.description).to.equal("before");
      expect(got?.value.allowedModels).to.equal(undefined);
      expect(got?.value.version).to.equal(3n);
      expect(got?.value.id).to.equal(g.id);
      expect(got?.value.createdAt).to.deep.equal(g.createdAt);
    });

    it("applies 40 concurrent patches of different fields and of one field without losing any", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      await store.createGuardrail(g);
      const read = await store.getGuardrail(ws.id, g.id);
      if (!read) throw new Error("not stored");
      const flags = [
        ["enforce_zdr_anthropic", "enforceZdrAnthropic"],
        ["enforce_zdr_openai", "enforceZdrOpenai"],
        ["enforce_zdr_google", "enforceZdrGoogle"],
        ["enforce_zdr_xai", "enforceZdrXai"],
        ["enforce_zdr_other", "enforceZdrOther"],
        ["enable_free_model_publication", "enableFreeModelPublication"],
        ["enable_free_model_training", "enableFreeModelTraining"],
        ["enable_paid_model_training", "enablePaidModelTraining"],
        ["include_byok_in_budgets", "includeByokInBudgets"],
      ] as const;
      const patches = [
        ...flags.map(([field, prop]) => patch(read, (n) => (n[prop] = true), [field])),
        ...Array.from({ length: 40 - flags.length }, (_, i) =>
          patch(read, (n) => (n.description = `d${i}`), ["description"]),
        ),
      ];
      const results = await Promise.all(patches.map((p) => store.patchGuardrail(p)));
      for (const r of results) expect(r).to.have.property("version");
      const got = await store.getGuardrail(ws.id, g.id);
      expect(got?.version).to.equal(41);
      for (const [, prop] of flags) expect(got?.value[prop], prop).to.equal(true);
      expect(got?.value.description).to.match(/^d\d+$/);
    });

    it("refuses a patch whose unchanged fields changed since the read", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      g.limitUsd = 5;
      g.resetInterval = ResetInterval.DAILY;
      await store.createGuardrail(g);
      const read = await store.getGuardrail(ws.id, g.id);
      if (!read) throw new Error("not stored");
      // Someone removes the budget; a patch of limit_usd alone validated against the old interval.
      const removed = await store.patchGuardrail(
        patch(
          read,
          (n) => {
            n.limitUsd = undefined;
            n.resetInterval = ResetInterval.UNSPECIFIED;
          },
          ["limit_usd", "reset_interval"],
        ),
      );
      expect(removed).to.include({ version: 2 });
      const stale = patch(read, (n) => (n.limitUsd = 9), ["limit_usd"], ["reset_interval"]);
      expect(await store.patchGuardrail(stale)).to.equal("conflict");
      const got = await store.getGuardrail(ws.id, g.id);
      expect(got?.version).to.equal(2);
      expect(got?.value.limitUsd).to.equal(undefined);
      // Unchanged since the read: applied.
      const fresh = patch(got as { value: Guardrail; version: number }, (n) => (n.name = "x"), [
        "name",
      ]);
      expect(await store.patchGuardrail({ ...fresh, unchanged: ["reset_interval"] })).to.include({
        version: 3,
      });
    });

    it("patches nothing that is missing, and materializes a workspace default", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      await store.createGuardrail(g);
      const read = await store.getGuardrail(ws.id, g.id);
      if (!read) throw new Error("not stored");
      expect(await store.deleteGuardrail(ws.id, g.id)).to.equal(true);
      // Deleted after the read: a conflict, so the caller reads again.
      expect(await store.patchGuardrail(patch(read, (n) => (n.name = "x"), ["name"]))).to.equal(
        "conflict",
      );
      expect(
        await store.patchGuardrail({
          ...patch(read, (n) => (n.name = "x"), ["name"]),
          readVersion: 0,
        }),
      ).to.equal("missing");
      const def = guardrail(ws.id, "default");
      def.id = defaultGuardrailId(ws.id);
      def.isWorkspaceDefault = true;
      def.description = "first";
      const materialize: GuardrailPatch = {
        workspaceId: ws.id,
        id: def.id,
        readVersion: 0,
        fields: ["description"],
        next: def,
        unchanged: [],
        read: def,
        materialize: true,
      };
      const made = await store.patchGuardrail(materialize);
      expect(made).to.include({ version: 1 });
      // A second first PATCH that raced it lands on the materialized record.
      const again = await store.patchGuardrail({
        ...materialize,
        next: { ...clone(GuardrailSchema, def), description: "second" },
      });
      expect(again).to.include({ version: 2 });
      const got = await store.getGuardrail(ws.id, def.id);
      expect(got?.value.description).to.equal("second");
      expect(got?.value.isWorkspaceDefault).to.equal(true);
      expect((await store.listGuardrails(ws.id, 0, 10)).total).to.equal(1);
    });

    it("refuses a guardrail in a missing workspace", async () => {
      expect(await store.createGuardrail(guardrail(newId()))).to.equal("missing-workspace");
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
      for (let i = 0; i < 3; i++) await store.createGuardrail(guardrail(w1.id, `a${i}`));
      for (let i = 0; i < 2; i++) await store.createGuardrail(guardrail(w2.id, `b${i}`));
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
      await store.createGuardrail(g1);
      await store.createGuardrail(g2);
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
      await store.createGuardrail(g);
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
      for (const g of [kg, mg, dg]) await store.createGuardrail(g);
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

    it("refuses to delete a workspace with enabled keys, and changes nothing", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      await store.createGuardrail(g);
      const [k1, k2] = [key(ws.id), key(ws.id)];
      await store.createKey(ws.id, k1);
      await store.createKey(ws.id, k2);
      await store.assign("key", [assignment(k1.hash, g.id, ws.id)]);
      expect(await store.deleteWorkspace(ws.id)).to.deep.equal({ activeKeys: 2 });
      expect(await store.getWorkspace(ws.id)).to.not.equal(undefined);
      expect(await store.keyScope(k1.hash)).to.equal(ws.id);
      expect((await store.getGuardrail(ws.id, g.id))?.value.id).to.equal(g.id);
      expect((await store.listAssignments("key", ws.id, undefined, 0, 50)).total).to.equal(1);
      // One key disabled: still one active.
      await store.putKey(ws.id, { ...k1, disabled: true });
      expect(await store.deleteWorkspace(ws.id)).to.deep.equal({ activeKeys: 1 });
      await store.putKey(ws.id, { ...k2, disabled: true });
      expect(await store.deleteWorkspace(ws.id)).to.equal("ok");
      expect(await store.keyScope(k2.hash)).to.equal(undefined);
    });

    it("deletes a workspace with its guardrails, disabled keys and assignments", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      await store.createGuardrail(g);
      const k = key(ws.id);
      k.disabled = true;
      await store.createKey(ws.id, k);
      await store.assign("key", [assignment(k.hash, g.id, ws.id)]);
      expect(await store.deleteWorkspace(ws.id)).to.equal("ok");
      expect(await store.getWorkspace(ws.id)).to.equal(undefined);
      expect(await store.guardrailWorkspace(g.id)).to.equal(undefined);
      expect(await store.keyScope(k.hash)).to.equal(undefined);
      expect(await store.loadGovernance(k.hash)).to.equal(undefined);
      expect((await store.listAssignments("key", undefined, undefined, 0, 50)).total).to.equal(0);
      expect(await store.deleteWorkspace(ws.id)).to.equal("missing");
      expect(await store.workspaceIdBySlug("w")).to.equal(undefined);
    });

    it("reads a guardrail for an answer as getGuardrail does, every change at once", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      await store.createGuardrail(g);
      const copy = await store.getGuardrail(ws.id, g.id);
      if (!copy) throw new Error("not stored");
      expect(await store.readGuardrail(ws.id, g.id)).to.deep.equal(copy);
      // Read again unchanged (the Redis store's decoded message), then after a patch.
      expect(await store.readGuardrail(ws.id, g.id)).to.deep.equal(copy);
      await store.patchGuardrail(patch(copy, (n) => (n.name = "renamed"), ["name"]));
      const after = await store.readGuardrail(ws.id, g.id);
      expect(after?.value.name).to.equal("renamed");
      expect(after).to.deep.equal(await store.getGuardrail(ws.id, g.id));
      expect(await store.deleteGuardrail(ws.id, g.id)).to.equal(true);
      expect(await store.readGuardrail(ws.id, g.id)).to.equal(undefined);
    });

    it("stores copies: mutating a returned object never changes stored state", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      g.allowedModels = create(StringListSchema, { values: ["a/b"] });
      await store.createGuardrail(g);
      g.allowedModels.values.push("mutated");
      const got = await store.getGuardrail(ws.id, g.id);
      got?.value.allowedModels?.values.push("mutated-again");
      const again = await store.getGuardrail(ws.id, g.id);
      expect(again?.value.allowedModels?.values).to.deep.equal(["a/b"]);
    });

    it("never stores unknown fields a client put into a guardrail's nested messages", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g = guardrail(ws.id);
      g.allowedModels = create(StringListSchema, { values: ["a/b"] });
      g.allowedModels.$unknown = [{ no: 99, wireType: 2, data: new Uint8Array(10_000) }];
      await store.createGuardrail(g);
      const got = await store.getGuardrail(ws.id, g.id);
      expect(got?.value.allowedModels?.values).to.deep.equal(["a/b"]);
      expect(got?.value.allowedModels?.$unknown ?? []).to.have.length(0);
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
            entity: "key:k",
            firstDay: 20_000,
            day: 20_000,
            limitMicros: 1_000,
            amountMicros: 400,
          },
        ],
      };
      const today = [{ guardrailId: "g1", entity: "key:k", firstDay: 20_000, lastDay: 20_000 }];
      // Unmetered workspace: credits do not apply until a balance is set.
      // rateUsed counts the key's admitted requests in the window (the RateLimit-Remaining source).
      expect(await store.admit(base)).to.deep.equal({ ok: true, metered: false, rateUsed: 1 });
      expect(await store.getCredits(ws.id)).to.equal(undefined);
      expect(await store.addCredits(ws.id, 500)).to.equal(500);
      expect(await store.admit(base)).to.deep.equal({ ok: true, metered: true, rateUsed: 2 });
      expect(await store.getCredits(ws.id)).to.equal(100);
      // Credits now short: 402 territory, and nothing else moved.
      const refused = await store.admit(base);
      expect(refused).to.deep.include({ ok: false, reason: "credits", balanceMicros: 100 });
      expect(await store.getSpend(ws.id, today)).to.deep.equal([800]);
      // Settling refunds the unused part of a reservation.
      await store.settle(
        base,
        {
          creditMicros: 100,
          keyMicros: 100,
          budgets: [{ guardrailId: "g1", entity: "key:k", amountMicros: 100 }],
        },
        true,
      );
      expect(await store.getCredits(ws.id)).to.equal(400);
      expect(await store.getSpend(ws.id, today)).to.deep.equal([500]);
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
      expect(await store.admit(free)).to.deep.include({ ok: true, rateUsed: 3 });
      const limited = await store.admit(free);
      expect(limited).to.deep.include({ ok: false, reason: "rate-limit" });
      expect((limited as { retryAfterMs: number }).retryAfterMs).to.be.within(1, 60_000);
    });

    describe("budget counters", () => {
      const charge = (entity: string, firstDay: number, day: number, amountMicros: number) => ({
        guardrailId: "g1",
        entity,
        firstDay,
        day,
        limitMicros: 1_000,
        amountMicros,
      });
      const admission = (scope: string, ...budgets: Admission["budgets"]): Admission => ({
        scope,
        keyHash: "b".repeat(64),
        creditMicros: 0,
        keyMicros: 0,
        budgets,
      });

      it("are per entity: one key's or member's spend never refuses another's", async () => {
        const ws = workspace("w");
        await store.createWorkspace(ws);
        const a = charge("key:a", 20_000, 20_000, 600);
        expect(await store.admit(admission(ws.id, a))).to.deep.include({ ok: true });
        // The same guardrail, another key: its own 1,000.
        expect(
          await store.admit(admission(ws.id, charge("key:b", 20_000, 20_000, 600))),
        ).to.deep.include({ ok: true });
        expect(
          await store.admit(admission(ws.id, charge("member:u1", 20_000, 20_000, 1_000))),
        ).to.deep.include({ ok: true });
        expect(await store.admit(admission(ws.id, a))).to.deep.equal({
          ok: false,
          reason: "budget",
          guardrailId: "g1",
          entity: "key:a",
          spentMicros: 600,
        });
        const day = { guardrailId: "g1", firstDay: 20_000, lastDay: 20_000 };
        expect(
          await store.getSpend(ws.id, [
            { ...day, entity: "key:a" },
            { ...day, entity: "key:b" },
            { ...day, entity: "member:u1" },
            { ...day, entity: "member:u2" },
          ]),
        ).to.deep.equal([600, 600, 1_000, 0]);
      });

      it("sum per guardrail and kind of entity over its window, with the largest entity's spend", async () => {
        const ws = workspace("w");
        await store.createWorkspace(ws);
        const other = (entity: string, day: number, amount: number) => ({
          ...charge(entity, day, day, amount),
          guardrailId: "g2",
        });
        for (const budgets of [
          [charge("key:a", 20_000, 20_000, 300), charge("member:u1", 20_000, 20_000, 300)],
          [charge("key:b", 20_001, 20_001, 200), charge("member:u1", 20_001, 20_001, 200)],
          [charge("key:a", 20_002, 20_002, 100)],
          // A replica whose clock is a day behind: key:a was still charged on 20_002.
          [charge("key:a", 20_001, 20_001, 50)],
          // Another guardrail, and a day before g1's window: neither counts for g1.
          [other("key:a", 20_002, 50)],
          [charge("key:c", 19_990, 19_990, 400)],
        ]) {
          expect(await store.admit(admission(ws.id, ...budgets))).to.deep.include({ ok: true });
        }
        expect(
          await store.getGuardrailSpend(ws.id, [
            { guardrailId: "g1", firstDay: 20_000, lastDay: 20_002 },
            { guardrailId: "g1", firstDay: 20_002, lastDay: 20_002 },
            { guardrailId: "g2", firstDay: 20_002, lastDay: 20_002 },
            { guardrailId: "g3", firstDay: 20_000, lastDay: 20_002 },
          ]),
        ).to.deep.equal([
          { keyMicros: 650, memberMicros: 500, maxEntityMicros: 500, entities: 3 },
          { keyMicros: 100, memberMicros: 0, maxEntityMicros: 100, entities: 1 },
          { keyMicros: 50, memberMicros: 0, maxEntityMicros: 50, entities: 1 },
          { keyMicros: 0, memberMicros: 0, maxEntityMicros: 0, entities: 0 },
        ]);
        expect(await store.getGuardrailSpend(ws.id, [])).to.deep.equal([]);
      });

      it("keep spend per day: a window counts every day it covers, whatever the window was before", async () => {
        const ws = workspace("w");
        await store.createWorkspace(ws);
        // Monday (day 20_003 is a Monday) and Tuesday, each charged as a daily window.
        expect(
          await store.admit(admission(ws.id, charge("key:a", 20_003, 20_003, 400))),
        ).to.deep.include({ ok: true });
        expect(
          await store.admit(admission(ws.id, charge("key:a", 20_004, 20_004, 400))),
        ).to.deep.include({ ok: true });
        // Wednesday: a daily window starts empty...
        expect(
          await store.getSpend(ws.id, [
            { guardrailId: "g1", entity: "key:a", firstDay: 20_005, lastDay: 20_005 },
          ]),
        ).to.deep.equal([0]);
        // ...but the week since Monday already holds 800 of its 1,000: 300 more would cross it.
        const weekly = charge("key:a", 20_003, 20_005, 300);
        expect(await store.admit(admission(ws.id, weekly))).to.deep.include({
          ok: false,
          reason: "budget",
          spentMicros: 800,
        });
        expect(
          await store.admit(admission(ws.id, { ...weekly, amountMicros: 200 })),
        ).to.deep.include({ ok: true });
        expect(
          await store.getSpend(ws.id, [
            { guardrailId: "g1", entity: "key:a", firstDay: 20_003, lastDay: 20_005 },
            { guardrailId: "g1", entity: "key:a", firstDay: 20_004, lastDay: 20_005 },
          ]),
        ).to.deep.equal([1_000, 600]);
      });

      it("settle the reservation's own day, even after midnight", async () => {
        const ws = workspace("w");
        await store.createWorkspace(ws);
        const a = { ...admission(ws.id, charge("key:a", 20_000, 20_000, 500)), id: newId() };
        expect(await store.admit(a)).to.deep.include({ ok: true });
        // A later request of the next day, then the first one settles at 100.
        expect(
          await store.admit(admission(ws.id, charge("key:a", 20_001, 20_001, 300))),
        ).to.deep.include({ ok: true });
        await store.settle(
          a,
          {
            creditMicros: 0,
            keyMicros: 0,
            budgets: [{ guardrailId: "g1", entity: "key:a", amountMicros: 100 }],
          },
          false,
        );
        const days = (firstDay: number, lastDay: number) => ({
          guardrailId: "g1",
          entity: "key:a",
          firstDay,
          lastDay,
        });
        expect(
          await store.getSpend(ws.id, [
            days(20_000, 20_000),
            days(20_001, 20_001),
            days(20_000, 20_001),
          ]),
        ).to.deep.equal([100, 300, 400]);
      });

      it("check budgets before the key's own limit, and a refusal reserves nothing", async () => {
        const ws = workspace("w");
        await store.createWorkspace(ws);
        const both: Admission = {
          ...admission(ws.id, charge("key:a", 20_000, 20_000, 1_500)),
          keyLimitMicros: 1_000,
          keyMicros: 1_500,
        };
        expect(await store.admit(both)).to.deep.include({ ok: false, reason: "budget" });
        expect(await store.admit({ ...both, budgets: [] })).to.deep.include({
          ok: false,
          reason: "key-limit",
          spentMicros: 0,
        });
        expect(
          await store.getSpend(ws.id, [
            { guardrailId: "g1", entity: "key:a", firstDay: 20_000, lastDay: 20_000 },
          ]),
        ).to.deep.equal([0]);
      });
    });

    it("settles once: a repeated settlement charges nothing twice", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      await store.addCredits(ws.id, 1_000);
      const admission: Admission = {
        id: "adm-record-1",
        scope: ws.id,
        keyHash: "r".repeat(64),
        rate: { limit: 100, windowMs: 60_000, nowMs: Date.now() },
        creditMicros: 300,
        keyLimitMicros: undefined,
        keyMicros: 300,
        budgets: [],
      };
      expect(await store.admit(admission)).to.deep.include({ ok: true });
      const actual = { creditMicros: 200, keyMicros: 200, budgets: [] };
      await store.settle(admission, actual, true);
      expect(await store.getCredits(ws.id)).to.equal(800);
      // A retry of the same settlement (its answer was lost) moves no money.
      await store.settle(admission, actual, true);
      expect(await store.getCredits(ws.id)).to.equal(800);
    });

    describe("reservations tracked for recovery", () => {
      const HASH = "v".repeat(64);
      const record = (text: string) => new TextEncoder().encode(text);
      async function tracked(id: string, leaseUntilMs: number) {
        const ws = workspace(`w-${id}`);
        await store.createWorkspace(ws);
        await store.addCredits(ws.id, 10_000);
        const a: Admission = {
          id,
          scope: ws.id,
          keyHash: HASH,
          creditMicros: 900,
          keyMicros: 900,
          budgets: [
            {
              guardrailId: "g1",
              entity: `key:${HASH}`,
              firstDay: 20_000,
              day: 20_000,
              limitMicros: 5_000,
              amountMicros: 900,
            },
          ],
          recovery: { leaseUntilMs, record: record(`draft ${id}`) },
        };
        expect(await store.admit(a)).to.deep.include({ ok: true, metered: true });
        return { ws, a };
      }
      const spent = (scope: string) =>
        store.getSpend(scope, [
          { guardrailId: "g1", entity: `key:${HASH}`, firstDay: 20_000, lastDay: 20_000 },
        ]);
      const served = (micros: number): Settlement => ({
        creditMicros: micros,
        keyMicros: micros,
        byokMicros: 0,
        budgets: [{ guardrailId: "g1", entity: `key:${HASH}`, amountMicros: micros }],
      });

      it("settles a reservation whose lease ended from its last checkpoint, record and all, once", async () => {
        const now = Date.now();
        const { ws, a } = await tracked("rec-1", now + 1_000);
        expect(await store.reservationLeases(ws.id)).to.deep.equal([
          { id: "rec-1", leaseUntilMs: now + 1_000 },
        ]);
        // The owner checkpoints what it served, then dies: no more beats.
        expect(
          await store.keepReservations(ws.id, [
            {
              admissionId: "rec-1",
              leaseUntilMs: now + 2_000,
              progress: { actual: served(250), record: record("served 250") },
            },
          ]),
        ).to.equal(1);
        // Not yet past the lease: nothing to recover.
        expect(await store.recoverReservations(now + 1_500, 10)).to.equal(0);
        expect(await store.getCredits(ws.id)).to.equal(10_000 - 900);
        expect(await store.recoverReservations(now + 2_001, 10)).to.equal(1);
        expect(await store.getCredits(ws.id)).to.equal(10_000 - 250);
        expect(await spent(ws.id)).to.deep.equal([250]);
        expect((await store.getKeyUsage(ws.id, HASH, new Date())).totalMicros).to.equal(250);
        expect(await store.reservationLeases(ws.id)).to.deep.equal([]);
        // Its record is in the outbox, exactly once.
        const outbox = (await store.outboxRecords(Date.now() + 1_000, 100)).filter(
          (o) => o.scope === ws.id,
        );
        // Its draft joined to how it ended, as last checkpointed.
        expect(outbox.map((o) => [o.id, new TextDecoder().decode(o.record)])).to.deep.equal([
          ["rec-1", "Jdraft rec-1\nserved 250"],
        ]);
        // The owner wakes up and settles: refused, nothing moves twice.
        expect(await store.settle(a, served(900), true, record("completed"))).to.equal(false);
        expect(await store.getCredits(ws.id)).to.equal(10_000 - 250);
        expect(await store.recoverReservations(now + 60_000, 10)).to.equal(0);
        await store.outboxDone(ws.id, ["rec-1"]);
        expect(
          (await store.outboxRecords(Date.now() + 1_000, 100)).filter((o) => o.scope === ws.id),
        ).to.deep.equal([]);
      });

      it("releases the whole reservation of an owner that died before any checkpoint", async () => {
        const now = Date.now();
        const { ws } = await tracked("rec-2", now - 1);
        expect(await store.recoverReservations(now, 10)).to.equal(1);
        expect(await store.getCredits(ws.id)).to.equal(10_000);
        expect(await spent(ws.id)).to.deep.equal([0]);
        const outbox = (await store.outboxRecords(Date.now() + 1_000, 100)).filter(
          (o) => o.scope === ws.id,
        );
        expect(outbox.map((o) => new TextDecoder().decode(o.record))).to.deep.equal([
          "Jdraft rec-2\n{}",
        ]);
      });

      it("lets the owner settle once while it holds the lease; a later sweep finds nothing", async () => {
        const now = Date.now();
        const { ws, a } = await tracked("rec-3", now + 1_000);
        expect(await store.settle(a, served(400), true, record("completed"))).to.equal(true);
        expect(await store.settle(a, served(400), true, record("completed"))).to.equal(false);
        expect(
          await store.keepReservations(ws.id, [
            { admissionId: "rec-3", leaseUntilMs: now + 5_000 },
          ]),
        ).to.equal(0);
        expect(await store.recoverReservations(now + 60_000, 10)).to.equal(0);
        expect(await store.getCredits(ws.id)).to.equal(10_000 - 400);
        const outbox = (await store.outboxRecords(Date.now() + 1_000, 100)).filter(
          (o) => o.scope === ws.id,
        );
        expect(outbox.map((o) => new TextDecoder().decode(o.record))).to.deep.equal([
          "Jdraft rec-3\ncompleted",
        ]);
        // A whole record ("P" first) is put there as it is.
        const other = await tracked("rec-4", now + 1_000);
        expect(await store.settle(other.a, served(100), true, record("Pwhole"))).to.equal(true);
        const whole = (await store.outboxRecords(Date.now() + 1_000, 100)).filter(
          (o) => o.scope === other.ws.id,
        );
        expect(whole.map((o) => new TextDecoder().decode(o.record))).to.deep.equal(["Pwhole"]);
      });
    });

    it("keeps each key's settled spend per budget window, on credits and BYOK apart", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const keyHash = "u".repeat(64);
      const other = "v".repeat(64);
      const admission = (id: string): Admission => ({
        id,
        scope: ws.id,
        keyHash,
        creditMicros: 300,
        keyLimitMicros: undefined,
        keyMicros: 300,
        budgets: [],
      });
      const settlements: [string, Settlement][] = [
        ["adm-usage-1", { creditMicros: 200, keyMicros: 200, byokMicros: 0, budgets: [] }],
        ["adm-usage-2", { creditMicros: 0, keyMicros: 0, byokMicros: 70, budgets: [] }],
      ];
      for (const [id, actual] of settlements) {
        expect(await store.admit(admission(id))).to.deep.include({ ok: true });
        await store.settle(admission(id), actual, false);
      }
      // A retried settlement counts once.
      await store.settle(
        admission("adm-usage-2"),
        {
          creditMicros: 0,
          keyMicros: 0,
          byokMicros: 70,
          budgets: [],
        },
        false,
      );
      const now = new Date();
      expect(await store.getKeyUsage(ws.id, keyHash, now)).to.deep.equal({
        totalMicros: 200,
        dailyMicros: 200,
        weeklyMicros: 200,
        monthlyMicros: 200,
        byokTotalMicros: 70,
        byokDailyMicros: 70,
        byokWeeklyMicros: 70,
        byokMonthlyMicros: 70,
      });
      // Another day's window holds nothing; the all-time totals stay.
      const later = new Date(now.getTime() + 40 * 86_400_000);
      expect(await store.getKeyUsage(ws.id, keyHash, later)).to.deep.equal({
        totalMicros: 200,
        dailyMicros: 0,
        weeklyMicros: 0,
        monthlyMicros: 0,
        byokTotalMicros: 70,
        byokDailyMicros: 0,
        byokWeeklyMicros: 0,
        byokMonthlyMicros: 0,
      });
      expect((await store.getKeyUsage(ws.id, other, now)).totalMicros).to.equal(0);
    });

    it("remembers every credit added, less what was removed", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      expect(await store.getCreditsAdded(ws.id)).to.equal(0);
      await store.addCredits(ws.id, 1_000);
      await store.addCredits(ws.id, -250);
      expect(await store.getCreditsAdded(ws.id)).to.equal(750);
      expect(await store.getCredits(ws.id)).to.equal(750);
    });

    it("adds a top-up once per idempotency id, the marker and the credits in one step", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      expect(await store.addCreditsOnce(ws.id, 1_000, "a".repeat(64), 60)).to.deep.equal({
        balanceMicros: 1_000,
        applied: true,
      });
      // The same id again (a retry after a lost answer): nothing moves, the balance is read.
      expect(await store.addCreditsOnce(ws.id, 1_000, "a".repeat(64), 60)).to.deep.equal({
        balanceMicros: 1_000,
        applied: false,
      });
      expect(await store.getCreditsAdded(ws.id)).to.equal(1_000);
      // Another id is another top-up; ids are per workspace.
      expect((await store.addCreditsOnce(ws.id, 500, "b".repeat(64), 60)).balanceMicros).to.equal(
        1_500,
      );
      const other = workspace("v");
      await store.createWorkspace(other);
      expect(await store.addCreditsOnce(other.id, 7, "a".repeat(64), 60)).to.deep.equal({
        balanceMicros: 7,
        applied: true,
      });
      expect(await store.getCredits(ws.id)).to.equal(1_500);
      expect(await store.getCreditsAdded(ws.id)).to.equal(1_500);
    });

    it("claims an idempotency id once, stores its answer, and frees a released claim", async () => {
      const first = await store.claimIdempotency("id-1", "fp", 60);
      expect(first.state).to.equal("claimed");
      const token = first.state === "claimed" ? first.token : "";
      // While it runs, another claim sees it in progress, with its fingerprint.
      expect(await store.claimIdempotency("id-1", "other", 60)).to.deep.equal({
        state: "in-progress",
        fingerprint: "fp",
      });
      // Only the claim's own token completes it.
      const answer = { status: 201, body: '{"data":{"id":"x"}}' };
      expect(await store.completeIdempotency("id-1", "not-the-token", answer, 60)).to.equal(false);
      expect(await store.completeIdempotency("id-1", token, answer, 60)).to.equal(true);
      expect(await store.claimIdempotency("id-1", "fp", 60)).to.deep.equal({
        state: "done",
        fingerprint: "fp",
        answer,
      });
      // A released claim is free again; a stale token releases nothing.
      const second = await store.claimIdempotency("id-2", "fp", 60);
      const token2 = second.state === "claimed" ? second.token : "";
      await store.releaseIdempotency("id-2", "stale");
      expect((await store.claimIdempotency("id-2", "fp", 60)).state).to.equal("in-progress");
      await store.releaseIdempotency("id-2", token2);
      expect((await store.claimIdempotency("id-2", "fp", 60)).state).to.equal("claimed");
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

    it("checks a key limit with limit_reset on its window's spend, reserved and settled there", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const keyHash = "d".repeat(64);
      // A minute before and after the coming UTC midnight (counter lifetimes count from them).
      const midnight = Math.ceil((Date.now() + 1) / 86_400_000) * 86_400_000;
      const today = new Date(midnight - 60_000);
      const tomorrow = new Date(midnight + 60_000);
      const admission = (id: string, at: Date): Admission => ({
        id,
        scope: ws.id,
        keyHash,
        creditMicros: 300,
        keyLimitMicros: 500,
        keyLimitWindow: keyLimitCounter(keyHash, "daily", at),
        keyMicros: 300,
        budgets: [],
      });
      const first = admission("adm-window-1", today);
      expect(await store.admit(first)).to.deep.include({ ok: true });
      // The reservation counts: 300 reserved + 300 more would pass 500.
      expect(await store.admit(admission("adm-window-2", today))).to.deep.include({
        ok: false,
        reason: "key-limit",
        spentMicros: 300,
      });
      // Settled after midnight: the difference lands on the day the reservation was made.
      await store.settle(first, { creditMicros: 100, keyMicros: 100, budgets: [] }, false);
      const windowOf = async (at: Date) =>
        (await store.getKeyUsage(ws.id, keyHash, at)).dailyMicros;
      expect(await windowOf(today)).to.equal(100);
      expect((await store.getKeyUsage(ws.id, keyHash, today)).totalMicros).to.equal(100);
      // 100 + 300 fits the day's 500 now; a third would not.
      expect(await store.admit(admission("adm-window-3", today))).to.deep.include({ ok: true });
      expect(await store.admit(admission("adm-window-4", today))).to.deep.include({
        ok: false,
        reason: "key-limit",
        spentMicros: 400,
      });
      // The next day is a new window: admitted, although the all-time spend (700) is past 500.
      expect(await store.admit(admission("adm-window-5", tomorrow))).to.deep.include({ ok: true });
      expect(await windowOf(tomorrow)).to.equal(300);
      expect((await store.getKeyUsage(ws.id, keyHash, tomorrow)).totalMicros).to.equal(700);
      // The same spend against an all-time limit is refused.
      const allTime: Admission = { ...admission("adm-window-6", tomorrow) };
      delete allTime.keyLimitWindow;
      expect(await store.admit(allTime)).to.deep.include({
        ok: false,
        reason: "key-limit",
        spentMicros: 700,
      });
    });

    it("checks a key limit with include_byok_in_limit on credit plus BYOK spend of its window", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const keyHash = "e".repeat(64);
      const now = new Date();
      const admission = (id: string, includesByok: boolean, daily: boolean): Admission => ({
        id,
        scope: ws.id,
        keyHash,
        creditMicros: 0,
        keyLimitMicros: 500,
        ...(daily ? { keyLimitWindow: keyLimitCounter(keyHash, "daily", now) } : {}),
        ...(includesByok ? { keyLimitIncludesByok: true } : {}),
        keyMicros: 300,
        budgets: [],
      });
      // Served through BYOK: the reservation leaves the credit counter, the cost goes to BYOK.
      const first = admission("adm-byok-1", true, false);
      expect(await store.admit(first)).to.deep.include({ ok: true });
      await store.settle(
        first,
        { creditMicros: 0, keyMicros: 0, byokMicros: 200, budgets: [] },
        false,
      );
      const usage = await store.getKeyUsage(ws.id, keyHash, now);
      expect(usage).to.include({ totalMicros: 0, dailyMicros: 0, byokTotalMicros: 200 });
      expect(usage.byokDailyMicros).to.equal(200);
      // 200 BYOK + 300 fits 500; in flight, that reservation counts for the next one.
      const second = admission("adm-byok-2", true, false);
      expect(await store.admit(second)).to.deep.include({ ok: true });
      expect(await store.admit(admission("adm-byok-3", true, false))).to.deep.include({
        ok: false,
        reason: "key-limit",
        spentMicros: 500,
      });
      await store.settle(
        second,
        { creditMicros: 0, keyMicros: 0, byokMicros: 250, budgets: [] },
        false,
      );
      // 450 of BYOK spend: a limit that counts it refuses 300 more, all-time or in today's window.
      for (const [id, daily] of [
        ["adm-byok-4", false],
        ["adm-byok-5", true],
      ] as const)
        expect(await store.admit(admission(id, true, daily))).to.deep.include({
          ok: false,
          reason: "key-limit",
          spentMicros: 450,
        });
      // The same limit without include_byok_in_limit counts credit spend only: none yet.
      expect(await store.admit(admission("adm-byok-6", false, false))).to.deep.include({
        ok: true,
      });
      expect(await store.admit(admission("adm-byok-7", false, true))).to.deep.include({
        ok: true,
      });
    });

    it("ships with the documented limits", () => {
      expect(COUNT_LIMITS).to.deep.equal({
        workspaces: 1_000,
        guardrailsPerWorkspace: 1_000,
        keysPerWorkspace: 10_000,
        managementKeys: 1_000,
        keyAssignmentsPerWorkspace: 10_000,
        memberAssignmentsPerWorkspace: 10_000,
      });
    });

    describe("count limits (small ones)", () => {
      let small: Store;
      beforeEach(async () => {
        small = await open(SMALL);
      });
      afterEach(async () => {
        await small.close();
      });

      it("never creates more workspaces than the limit, even concurrently", async () => {
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => small.createWorkspace(workspace(`w${i}`))),
        );
        expect(results.filter((r) => r === "ok")).to.have.length(3);
        const refused = results.find(isLimitReached);
        expect(refused).to.deep.equal({ limit: 3, count: 3, adding: 1 });
        expect((await small.listWorkspaces(0, 50)).total).to.equal(3);
        // A refused create leaves its slug free.
        const [first] = (await small.listWorkspaces(0, 1)).items;
        await small.deleteWorkspace(first?.id ?? "");
        expect(await small.createWorkspace(workspace("again"))).to.equal("ok");
      });

      it("never creates more guardrails in a workspace than the limit; the default does not count", async () => {
        const ws = workspace("w");
        await small.createWorkspace(ws);
        const def = guardrail(ws.id, "default");
        def.id = defaultGuardrailId(ws.id);
        expect(await small.createGuardrail(def)).to.equal("ok");
        const results = await Promise.all(
          Array.from({ length: 10 }, () => small.createGuardrail(guardrail(ws.id))),
        );
        expect(results.filter((r) => r === "ok")).to.have.length(3);
        expect(results.find(isLimitReached)).to.deep.equal({ limit: 3, count: 3, adding: 1 });
        expect((await small.listGuardrails(ws.id, 0, 50)).total).to.equal(4);
        // Another workspace has a count of its own.
        const other = workspace("o");
        await small.createWorkspace(other);
        expect(await small.createGuardrail(guardrail(other.id))).to.equal("ok");
      });

      it("never creates more keys than the limit, per workspace and for management keys", async () => {
        const ws = workspace("w");
        await small.createWorkspace(ws);
        const made = Array.from({ length: 6 }, () => key(ws.id));
        const results = await Promise.all(made.map((k) => small.createKey(ws.id, k)));
        expect(results.filter((r) => r === "ok")).to.have.length(3);
        expect(results.find(isLimitReached)).to.deep.equal({ limit: 3, count: 3, adding: 1 });
        // A refused key leaves no trace: its hash is free, nothing is listed.
        const refused = made.filter((_, i) => results[i] !== "ok");
        for (const k of refused) expect(await small.keyScope(k.hash)).to.equal(undefined);
        expect((await small.listKeys(ws.id, 0, 50)).total).to.equal(3);
        const mgmt = await Promise.all(
          Array.from({ length: 4 }, () => small.createKey(ORG_SCOPE, key(ORG_SCOPE))),
        );
        expect(mgmt.filter((r) => r === "ok")).to.have.length(2);
        expect(mgmt.find(isLimitReached)).to.deep.equal({ limit: 2, count: 2, adding: 1 });
      });

      it("refuses an assignment past the limit as a whole; reassigning does not count", async () => {
        const ws = workspace("w");
        await small.createWorkspace(ws);
        const g1 = guardrail(ws.id);
        const g2 = guardrail(ws.id);
        await small.createGuardrail(g1);
        await small.createGuardrail(g2);
        const members = (ids: string[], g: string) => ids.map((m) => assignment(m, g, ws.id));
        expect(await small.assign("member", members(["a", "b"], g1.id))).to.deep.equal({
          assigned: 2,
        });
        // Two new subjects where one place is left: nothing is assigned.
        expect(await small.assign("member", members(["a", "c", "d"], g2.id))).to.deep.equal({
          limit: 3,
          count: 2,
          adding: 2,
        });
        expect((await small.getAssignment("member", ws.id, "a"))?.guardrailId).to.equal(g1.id);
        expect(await small.assign("member", members(["a", "b", "c"], g2.id))).to.deep.equal({
          assigned: 3,
        });
        expect(isLimitReached(await small.assign("member", members(["d"], g1.id)))).to.equal(true);
        // Concurrent assignments of one new subject each: exactly the free places are taken.
        await small.unassign("member", ws.id, g2.id, ["a", "b", "c"]);
        const results = await Promise.all(
          ["p", "q", "r", "s", "t", "u"].map((m) => small.assign("member", members([m], g1.id))),
        );
        expect(results.filter((r) => !isLimitReached(r))).to.have.length(3);
        expect((await small.listAssignments("member", ws.id, undefined, 0, 50)).total).to.equal(3);
        // Key assignments count on their own.
        const k = key(ws.id);
        await small.createKey(ws.id, k);
        expect(await small.assign("key", [assignment(k.hash, g1.id, ws.id)])).to.deep.equal({
          assigned: 1,
        });
      });
    });

    it("pages enabled keys in the store, following updates and deletes", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const keys = [];
      for (let i = 0; i < 6; i++) {
        const k = key(ws.id);
        k.name = `k${i}`;
        k.createdAt = {
          ...nowTimestamp(),
          seconds: BigInt(1_700_000_000 + i),
        } as typeof k.createdAt;
        await store.createKey(ws.id, k);
        keys.push(k);
      }
      for (const i of [1, 3]) {
        const k = keys[i];
        if (!k) continue;
        k.disabled = true;
        await store.putKey(ws.id, k);
      }
      const names = async (offset: number, limit: number, enabledOnly: boolean) => {
        const p = await store.listKeys(ws.id, offset, limit, enabledOnly);
        return { names: p.items.map((k) => k.name), total: p.total };
      };
      expect(await names(0, 10, true)).to.deep.equal({ names: ["k0", "k2", "k4", "k5"], total: 4 });
      expect(await names(1, 2, true)).to.deep.equal({ names: ["k2", "k4"], total: 4 });
      expect(await names(1, 2, false)).to.deep.equal({ names: ["k1", "k2"], total: 6 });
      // Re-enabled keys return in their place; deleted ones leave both lists.
      const k3 = keys[3];
      if (k3) {
        k3.disabled = false;
        await store.putKey(ws.id, k3);
      }
      await store.deleteKey(ws.id, keys[0]?.hash ?? "");
      expect(await names(0, 10, true)).to.deep.equal({ names: ["k2", "k3", "k4", "k5"], total: 4 });
      // Across every scope (management keys first).
      await store.createKey(ORG_SCOPE, key(ORG_SCOPE));
      expect((await store.listKeys(undefined, 0, 2, true)).total).to.equal(5);
      expect((await store.listKeys(undefined, 0, 50, false)).total).to.equal(6);
    });

    it("pages assignments in the store, per guardrail and per workspace", async () => {
      const ws = workspace("w");
      await store.createWorkspace(ws);
      const g1 = guardrail(ws.id);
      const g2 = guardrail(ws.id);
      await store.createGuardrail(g1);
      await store.createGuardrail(g2);
      const at = (subject: string, g: string, ms: number) => ({
        ...assignment(subject, g, ws.id),
        createdAtMs: ms,
      });
      await store.assign("member", [at("m1", g1.id, 1000), at("m2", g1.id, 1000)]);
      await store.assign("member", [at("m3", g2.id, 2000)]);
      await store.assign("member", [at("m4", g1.id, 3000)]);
      const subjects = async (g: string | undefined, offset: number, limit: number) => {
        const p = await store.listAssignments("member", ws.id, g, offset, limit);
        return { subjects: p.items.map((a) => a.subject), total: p.total };
      };
      expect(await subjects(g1.id, 0, 10)).to.deep.equal({
        subjects: ["m1", "m2", "m4"],
        total: 3,
      });
      expect(await subjects(g1.id, 1, 1)).to.deep.equal({ subjects: ["m2"], total: 3 });
      expect(await subjects(undefined, 2, 10)).to.deep.equal({ subjects: ["m3", "m4"], total: 4 });
      // Moving a member moves it between the guardrails' lists.
      await store.assign("member", [at("m1", g2.id, 4000)]);
      expect(await subjects(g1.id, 0, 10)).to.deep.equal({ subjects: ["m2", "m4"], total: 2 });
      expect(await subjects(g2.id, 0, 10)).to.deep.equal({ subjects: ["m3", "m1"], total: 2 });
      expect(await store.unassign("member", ws.id, g1.id, ["m2"])).to.equal(1);
      expect(await subjects(undefined, 0, 10)).to.deep.equal({
        subjects: ["m3", "m4", "m1"],
        total: 3,
      });
      // Deleting a guardrail or a key removes its assignments from every list.
      expect(await store.deleteGuardrail(ws.id, g2.id)).to.equal(true);
      expect(await subjects(undefined, 0, 10)).to.deep.equal({ subjects: ["m4"], total: 1 });
      expect(await subjects(g2.id, 0, 10)).to.deep.equal({ subjects: [], total: 0 });
      const k = key(ws.id);
      await store.createKey(ws.id, k);
      await store.assign("key", [assignment(k.hash, g1.id, ws.id)]);
      expect((await store.listAssignments("key", ws.id, g1.id, 0, 10)).total).to.equal(1);
      await store.deleteKey(ws.id, k.hash);
      expect((await store.listAssignments("key", ws.id, g1.id, 0, 10)).total).to.equal(0);
      expect((await store.listAssignments("key", undefined, undefined, 0, 10)).total).to.equal(0);
    });

    it("announces changes of a workspace to invalidation listeners", async () => {
      const seen: string[] = [];
      const off = store.onInvalidate((scope) => seen.push(scope));
      try {
        // Give a Redis subscription time to be established before the change.
        await new Promise((r) => setTimeout(r, 100));
        const ws = workspace("w");
        await store.createWorkspace(ws);
        await store.createGuardrail(guardrail(ws.id));
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
