import { expect } from "chai";
import { unique, useContractSystem, valid } from "../kit/contract-clients.js";

describe("contract: @openrouter/sdk guardrail assignments (keys and members)", () => {
  const h = useContractSystem();

  async function guardrail(): Promise<string> {
    const g = await valid(
      h.admin.guardrails.create({ createGuardrailRequest: { name: unique("assignments") } }),
    );
    return g.data.id;
  }

  it("keys: bulkAssignKeys / listGuardrailKeyAssignments / listKeyAssignments / bulkUnassignKeys", async () => {
    const id = await guardrail();
    const key = await h.speech.createKey({ name: unique("assigned key") });
    const assigned = await valid(
      h.admin.guardrails.bulkAssignKeys({ id, bulkAssignKeysRequest: { keyHashes: [key.hash] } }),
    );
    expect(assigned.assignedCount).to.equal(1);
    const mine = await valid(h.admin.guardrails.listGuardrailKeyAssignments({ id }));
    expect(mine.result.data.map((a) => a.keyHash)).to.deep.equal([key.hash]);
    expect(mine.result.data[0]?.keyName).to.match(/^assigned key/);
    expect(mine.result.data[0]?.keyLabel).to.be.a("string").that.is.not.empty;
    const all = await valid(h.admin.guardrails.listKeyAssignments({ limit: 100 }));
    expect(all.result.data.map((a) => a.keyHash)).to.include(key.hash);
    const removed = await valid(
      h.admin.guardrails.bulkUnassignKeys({
        id,
        bulkUnassignKeysRequest: { keyHashes: [key.hash] },
      }),
    );
    expect(removed.unassignedCount).to.equal(1);
    const after = await valid(h.admin.guardrails.listGuardrailKeyAssignments({ id }));
    expect(after.result.totalCount).to.equal(0);
  });

  it("members: bulkAssignMembers / listGuardrailMemberAssignments / listMemberAssignments / bulkUnassignMembers", async () => {
    const id = await guardrail();
    const user = `user_${unique("m").replace(/\W/g, "_")}`;
    const assigned = await valid(
      h.admin.guardrails.bulkAssignMembers({
        id,
        bulkAssignMembersRequest: { memberUserIds: [user] },
      }),
    );
    expect(assigned.assignedCount).to.equal(1);
    const mine = await valid(h.admin.guardrails.listGuardrailMemberAssignments({ id }));
    expect(mine.result.data.map((a) => a.userId)).to.deep.equal([user]);
    expect(mine.result.data[0]?.organizationId).to.be.a("string");
    const all = await valid(h.admin.guardrails.listMemberAssignments({ limit: 100 }));
    expect(all.result.data.map((a) => a.userId)).to.include(user);
    const removed = await valid(
      h.admin.guardrails.bulkUnassignMembers({
        id,
        bulkUnassignMembersRequest: { memberUserIds: [user] },
      }),
    );
    expect(removed.unassignedCount).to.equal(1);
  });
});
