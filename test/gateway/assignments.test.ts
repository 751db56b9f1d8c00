import { createHash, randomUUID } from "node:crypto";
import { expect } from "chai";
import { expectError, expectStatus } from "../kit/expect.js";
import { createGuardrail, createKey, createWorkspace, useSystem } from "../kit/gateway-harness.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

interface Assignment {
  key_hash?: string;
  user_id?: string;
  guardrail_id: string;
}

describe("gateway: guardrail assignments", () => {
  const h = useSystem();
  const keysOf = async (guardrailId: string) => {
    const res = await h.api.get(`/api/v1/guardrails/${guardrailId}/assignments/keys`);
    expectStatus(res, 200);
    expect(res.body.total_count).to.equal(res.body.data.length);
    return (res.body.data as Assignment[]).map((a) => a.key_hash).sort();
  };
  const membersOf = async (guardrailId: string) => {
    const res = await h.api.get(`/api/v1/guardrails/${guardrailId}/assignments/members`);
    expectStatus(res, 200);
    expect(res.body.total_count).to.equal(res.body.data.length);
    return (res.body.data as Assignment[]).map((a) => a.user_id).sort();
  };
  const allKeyAssignments = async () => {
    const res = await h.api.get("/api/v1/guardrails/assignments/keys?limit=100");
    expectStatus(res, 200);
    return res.body.data as Assignment[];
  };
  const allMemberAssignments = async () => {
    const res = await h.api.get("/api/v1/guardrails/assignments/members?limit=100");
    expectStatus(res, 200);
    return res.body.data as Assignment[];
  };
  const assignKeys = (id: string, key_hashes: unknown) =>
    h.api.post(`/api/v1/guardrails/${id}/assignments/keys`, { key_hashes });
  const unassignKeys = (id: string, key_hashes: unknown) =>
    h.api.post(`/api/v1/guardrails/${id}/assignments/keys/remove`, { key_hashes });
  const assignMembers = (id: string, member_user_ids: unknown) =>
    h.api.post(`/api/v1/guardrails/${id}/assignments/members`, { member_user_ids });
  const unassignMembers = (id: string, member_user_ids: unknown) =>
    h.api.post(`/api/v1/guardrails/${id}/assignments/members/remove`, { member_user_ids });
  const keyGuardrail = async (hash: string) => {
    const res = await h.api.get(`/api/v1/keys/${hash}`);
    expectStatus(res, 200);
    return res.body.data.guardrail_id;
  };

  describe("keys", () => {
    it("assigns keys ({ assigned_count }) and counts a repeat as 0", async () => {
      const a = await createGuardrail(h.api);
      const k1 = (await createKey(h.api)).data.hash;
      const k2 = (await createKey(h.api)).data.hash;
      expect(await keyGuardrail(k1)).to.equal(null);

      const res = await assignKeys(a.id, [k1, k2]);
      expectStatus(res, 200);
      expect(res.body).to.deep.equal({ assigned_count: 2 });
      expect((await assignKeys(a.id, [k1, k2])).body).to.deep.equal({ assigned_count: 0 });
      expect((await assignKeys(a.id, [k1, k1])).body).to.deep.equal({ assigned_count: 0 });

      expect(await keysOf(a.id)).to.deep.equal([k1, k2].sort());
      expect(await keyGuardrail(k1)).to.equal(a.id);
      expect(await keyGuardrail(k2)).to.equal(a.id);
    });

    it("lists a key assignment with its key name, guardrail and creation time", async () => {
      const a = await createGuardrail(h.api);
      const { data: key } = await createKey(h.api, { name: "Listed key" });
      await assignKeys(a.id, [key.hash]);
      const res = await h.api.get(`/api/v1/guardrails/${a.id}/assignments/keys`);
      expect(res.body.total_count).to.equal(1);
      const [row] = res.body.data;
      expect(row).to.include({ key_hash: key.hash, guardrail_id: a.id, key_name: "Listed key" });
      // OpenRouter's shape: the key's label (its non-secret rendering) as well as its name.
      expect(row.key_label).to.equal(key.label);
      expect(row.key_label)
        .to.be.a("string")
        .and.match(/\.\.\./);
      expect(Object.keys(row).sort()).to.deep.equal([
        "assigned_by",
        "created_at",
        "guardrail_id",
        "id",
        "key_hash",
        "key_label",
        "key_name",
      ]);
      expect(row.id).to.be.a("string");
      expect(Date.parse(row.created_at)).to.be.a("number").and.not.NaN;
      const hash = createHash("sha256").update(MANAGEMENT_KEY).digest("hex");
      expect(row.assigned_by).to.equal(hash);
    });

    it("gives a key at most one guardrail: assigning another replaces the first", async () => {
      const a = await createGuardrail(h.api);
      const b = await createGuardrail(h.api);
      const k1 = (await createKey(h.api)).data.hash;
      const k2 = (await createKey(h.api)).data.hash;
      await assignKeys(a.id, [k1, k2]);

      expect((await assignKeys(b.id, [k1])).body).to.deep.equal({ assigned_count: 1 });
      expect(await keysOf(a.id)).to.deep.equal([k2]);
      expect(await keysOf(b.id)).to.deep.equal([k1]);
      expect(await keyGuardrail(k1)).to.equal(b.id);

      const all = await allKeyAssignments();
      expect(all.filter((x) => x.key_hash === k1)).to.have.length(1);
      expect(all.find((x) => x.key_hash === k1)?.guardrail_id).to.equal(b.id);
      expect(all.find((x) => x.key_hash === k2)?.guardrail_id).to.equal(a.id);
    });

    it("unassigns ({ unassigned_count }) only what the guardrail holds", async () => {
      const a = await createGuardrail(h.api);
      const b = await createGuardrail(h.api);
      const k1 = (await createKey(h.api)).data.hash;
      const k2 = (await createKey(h.api)).data.hash;
      await assignKeys(a.id, [k1]);
      await assignKeys(b.id, [k2]);

      // k2 belongs to b: removing it from a changes nothing.
      expect((await unassignKeys(a.id, [k2])).body).to.deep.equal({ unassigned_count: 0 });
      expect(await keyGuardrail(k2)).to.equal(b.id);

      const res = await unassignKeys(a.id, [k1, k2]);
      expectStatus(res, 200);
      expect(res.body).to.deep.equal({ unassigned_count: 1 });
      expect((await unassignKeys(a.id, [k1])).body).to.deep.equal({ unassigned_count: 0 });
      expect(await keysOf(a.id)).to.deep.equal([]);
      expect(await keyGuardrail(k1)).to.equal(null);
      expect((await allKeyAssignments()).map((x) => x.key_hash)).not.to.include(k1);
    });

    it("rejects an unknown key hash, a key of another workspace and a management key with 400", async () => {
      const a = await createGuardrail(h.api);
      const known = (await createKey(h.api)).data.hash;
      const unknown = createHash("sha256").update(randomUUID()).digest("hex");
      expectError(await assignKeys(a.id, [known, unknown]), 400, /key_hashes\[1\]/);
      // Nothing of a rejected request is applied.
      expect(await keysOf(a.id)).to.deep.equal([]);

      const ws = await createWorkspace(h.api);
      const foreign = (await createKey(h.api, { workspace_id: ws.id })).data.hash;
      expectError(await assignKeys(a.id, [foreign]), 400, /key_hashes\[0\]/);
      const mgmt = (await createKey(h.api, { kind: "management" })).data.hash;
      expectError(await assignKeys(a.id, [mgmt]), 400, /key_hashes\[0\]/);
      expectError(await assignKeys(a.id, ["not-a-hash"]), 400, /key_hashes\[0\]/);
    });

    it("validates the body", async () => {
      const a = await createGuardrail(h.api);
      const k = (await createKey(h.api)).data.hash;
      expectError(await assignKeys(a.id, []), 400, /key_hashes/);
      expectError(await assignKeys(a.id, k), 400, /key_hashes/);
      expectError(await assignKeys(a.id, [k, 5]), 400, /key_hashes\[1\]/);
      expectError(
        await h.api.post(`/api/v1/guardrails/${a.id}/assignments/keys`, {}),
        400,
        /key_hashes/,
      );
      expectError(
        await h.api.post(`/api/v1/guardrails/${a.id}/assignments/keys`, {
          key_hashes: [k],
          member_user_ids: ["u"],
        }),
        400,
        /member_user_ids/,
      );
      expectError(await unassignKeys(a.id, []), 400, /key_hashes/);
    });

    it("answers 404 for an unknown guardrail and 400 for a non-UUID one", async () => {
      const k = (await createKey(h.api)).data.hash;
      const ghost = randomUUID();
      expectError(await assignKeys(ghost, [k]), 404);
      expectError(await unassignKeys(ghost, [k]), 404);
      expectError(await h.api.get(`/api/v1/guardrails/${ghost}/assignments/keys`), 404);
      expectError(await assignKeys("nope", [k]), 400);
      expect(await keyGuardrail(k)).to.equal(null);
    });
  });

  describe("members", () => {
    it("assigns, replaces, lists and unassigns members", async () => {
      const a = await createGuardrail(h.api);
      const b = await createGuardrail(h.api);
      const [u1, u2] = [`user-${randomUUID()}`, `user-${randomUUID()}`];

      const res = await assignMembers(a.id, [u1, u2]);
      expectStatus(res, 200);
      expect(res.body).to.deep.equal({ assigned_count: 2 });
      expect((await assignMembers(a.id, [u2, u1])).body).to.deep.equal({ assigned_count: 0 });
      expect(await membersOf(a.id)).to.deep.equal([u1, u2].sort());

      expect((await assignMembers(b.id, [u1])).body).to.deep.equal({ assigned_count: 1 });
      expect(await membersOf(a.id)).to.deep.equal([u2]);
      expect(await membersOf(b.id)).to.deep.equal([u1]);

      const all = await allMemberAssignments();
      const mine = all.filter((x) => x.user_id === u1 || x.user_id === u2);
      expect(mine.map((x) => [x.user_id, x.guardrail_id]).sort()).to.deep.equal(
        [
          [u1, b.id],
          [u2, a.id],
        ].sort(),
      );
      const row = all.find((x) => x.user_id === u1) as Assignment & { workspace_id: string };
      expect(row.workspace_id).to.equal(b.workspace_id);
      // OpenRouter's shape: the member's organization (a deployment is one organization).
      expect(Object.keys(row).sort()).to.deep.equal([
        "assigned_by",
        "created_at",
        "guardrail_id",
        "id",
        "organization_id",
        "user_id",
        "workspace_id",
      ]);
      expect(row).to.include({ organization_id: "org" });

      expect((await unassignMembers(a.id, [u1])).body).to.deep.equal({ unassigned_count: 0 });
      const removed = await unassignMembers(a.id, [u2]);
      expectStatus(removed, 200);
      expect(removed.body).to.deep.equal({ unassigned_count: 1 });
      expect(await membersOf(a.id)).to.deep.equal([]);
      expect(await membersOf(b.id)).to.deep.equal([u1]);
    });

    it("validates the body and the guardrail", async () => {
      const a = await createGuardrail(h.api);
      expectError(await assignMembers(a.id, []), 400, /member_user_ids/);
      expectError(await assignMembers(a.id, [""]), 400, /member_user_ids\[0\]/);
      expectError(await assignMembers(a.id, ["u", null]), 400, /member_user_ids\[1\]/);
      expectError(await assignMembers(a.id, ["x".repeat(257)]), 400, /member_user_ids\[0\]/);
      expectError(
        await h.api.post(`/api/v1/guardrails/${a.id}/assignments/members`, { key_hashes: ["x"] }),
        400,
        /key_hashes/,
      );
      expectError(await assignMembers(randomUUID(), ["u"]), 404);
      expectError(await unassignMembers(randomUUID(), ["u"]), 404);
    });
  });

  describe("lists", () => {
    it("page with offset and limit and reject bad values", async () => {
      const a = await createGuardrail(h.api);
      const hashes: string[] = [];
      for (let i = 0; i < 3; i++) hashes.push((await createKey(h.api)).data.hash);
      await assignKeys(a.id, hashes);
      const page = async (q: string) =>
        (await h.api.get(`/api/v1/guardrails/${a.id}/assignments/keys?${q}`)).body;
      const first = await page("limit=2");
      const second = await page("offset=2&limit=2");
      expect(first.total_count).to.equal(3);
      expect(first.data).to.have.length(2);
      expect(second.data).to.have.length(1);
      expect(
        [...first.data, ...second.data].map((x: Assignment) => x.key_hash).sort(),
      ).to.deep.equal([...hashes].sort());
      for (const q of ["limit=0", "limit=101", "offset=-1", "limit=x", "foo=1"]) {
        expectError(await h.api.get(`/api/v1/guardrails/${a.id}/assignments/keys?${q}`), 400);
        expectError(await h.api.get(`/api/v1/guardrails/assignments/members?${q}`), 400);
      }
    });
  });

  describe("deleting a guardrail", () => {
    it("removes its key and member assignments", async () => {
      const c = await createGuardrail(h.api);
      const other = await createGuardrail(h.api);
      const k3 = (await createKey(h.api)).data.hash;
      const k4 = (await createKey(h.api)).data.hash;
      const u3 = `user-${randomUUID()}`;
      await assignKeys(c.id, [k3]);
      await assignKeys(other.id, [k4]);
      await assignMembers(c.id, [u3]);
      expect(await keyGuardrail(k3)).to.equal(c.id);

      expectStatus(await h.api.delete(`/api/v1/guardrails/${c.id}`), 200);

      expect(await keyGuardrail(k3)).to.equal(null);
      expect((await allKeyAssignments()).map((x) => x.key_hash)).not.to.include(k3);
      expect((await allMemberAssignments()).map((x) => x.user_id)).not.to.include(u3);
      expectError(await h.api.get(`/api/v1/guardrails/${c.id}/assignments/keys`), 404);
      // Other guardrails' assignments are untouched.
      expect(await keyGuardrail(k4)).to.equal(other.id);
      // The key is free to take another guardrail.
      expect((await assignKeys(other.id, [k3])).body).to.deep.equal({ assigned_count: 1 });
    });

    it("removes a deleted key's assignment", async () => {
      const a = await createGuardrail(h.api);
      const k = (await createKey(h.api)).data.hash;
      await assignKeys(a.id, [k]);
      expectStatus(await h.api.delete(`/api/v1/keys/${k}`), 200);
      expect(await keysOf(a.id)).to.deep.equal([]);
    });
  });
});
