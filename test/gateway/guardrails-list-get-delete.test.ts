import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { expectError, expectStatus } from "../kit/expect.js";
import {
  createGuardrail,
  createWorkspace,
  expectGuardrail,
  useSystem,
} from "../kit/gateway-harness.js";

describe("gateway: GET/DELETE /api/v1/guardrails and GET /api/v1/guardrails/{id}", () => {
  const h = useSystem();
  let ws: { id: string };
  const ids: string[] = [];
  const list = (query: string) => h.api.get(`/api/v1/guardrails?${query}`);

  before(async () => {
    ws = await createWorkspace(h.api);
    // 51 guardrails: one more than the default page.
    for (let i = 0; i < 51; i++) {
      ids.push((await createGuardrail(h.api, { workspace_id: ws.id, name: `g${i}` })).id);
    }
  });

  describe("GET /guardrails/{id}", () => {
    it("answers 200 { data } with the complete guardrail", async () => {
      const g = await createGuardrail(h.api, { allowed_models: ["a/b"] });
      const res = await h.api.get(`/api/v1/guardrails/${g.id}`);
      expectStatus(res, 200);
      expect(Object.keys(res.body)).to.deep.equal(["data"]);
      expectGuardrail(res.body.data);
      expect(res.body.data).to.deep.equal(g);
    });

    it("answers 404 for an unknown id and 400 for a non-UUID id", async () => {
      expectError(await h.api.get(`/api/v1/guardrails/${randomUUID()}`), 404, /not found/);
      expectError(await h.api.get("/api/v1/guardrails/12345"), 400, /UUID/);
    });
  });

  describe("DELETE /guardrails/{id}", () => {
    it("answers 200 { deleted: true }, then the guardrail is gone everywhere", async () => {
      const g = await createGuardrail(h.api, { workspace_id: ws.id });
      const before = (await list(`workspace_id=${ws.id}&limit=100`)).body;
      expect(before.data.map((x: { id: string }) => x.id)).to.include(g.id);

      const res = await h.api.delete(`/api/v1/guardrails/${g.id}`);
      expectStatus(res, 200);
      expect(res.body).to.deep.equal({ deleted: true });

      expectError(await h.api.get(`/api/v1/guardrails/${g.id}`), 404);
      expectError(await h.api.delete(`/api/v1/guardrails/${g.id}`), 404);
      const after = (await list(`workspace_id=${ws.id}&limit=100`)).body;
      expect(after.total_count).to.equal(before.total_count - 1);
      expect(after.data.map((x: { id: string }) => x.id)).not.to.include(g.id);
    });

    it("answers 404 for an unknown id and 400 for a non-UUID id", async () => {
      expectError(await h.api.delete(`/api/v1/guardrails/${randomUUID()}`), 404);
      expectError(await h.api.delete("/api/v1/guardrails/abc"), 400);
    });
  });

  describe("GET /guardrails", () => {
    it("answers 200 { data, total_count } with complete guardrails, 50 by default", async () => {
      const res = await list(`workspace_id=${ws.id}`);
      expectStatus(res, 200);
      expect(Object.keys(res.body).sort()).to.deep.equal(["data", "total_count"]);
      expect(res.body.total_count).to.equal(51);
      expect(res.body.data).to.have.length(50);
      for (const g of res.body.data) expectGuardrail(g);
    });

    it("filters by workspace_id", async () => {
      const other = await createWorkspace(h.api);
      const mine = await createGuardrail(h.api, { workspace_id: other.id });
      const res = await list(`workspace_id=${other.id}`);
      expect(res.body.total_count).to.equal(1);
      expect(res.body.data.map((g: { id: string }) => g.id)).to.deep.equal([mine.id]);
      for (const g of (await list(`workspace_id=${ws.id}&limit=100`)).body.data) {
        expect(g.workspace_id).to.equal(ws.id);
      }
    });

    it("lists the default workspace's guardrails when no workspace_id is given", async () => {
      const mine = await createGuardrail(h.api);
      expect(mine.workspace_id).to.equal(h.system.defaultWorkspaceId);
      const res = await list("limit=100");
      expectStatus(res, 200);
      const byDefault = (await list(`workspace_id=${h.system.defaultWorkspaceId}&limit=100`)).body;
      expect(res.body).to.deep.equal(byDefault);
      expect(res.body.data.map((g: { id: string }) => g.id)).to.include(mine.id);
      // None of the 51 in the other workspace.
      for (const g of res.body.data) expect(g.workspace_id).to.equal(h.system.defaultWorkspaceId);
    });

    it("pages with offset and limit, every guardrail exactly once", async () => {
      const seen: string[] = [];
      for (let offset = 0; offset < 51; offset += 20) {
        const res = await list(`workspace_id=${ws.id}&offset=${offset}&limit=20`);
        expectStatus(res, 200);
        expect(res.body.total_count).to.equal(51);
        expect(res.body.data).to.have.length(Math.min(20, 51 - offset));
        seen.push(...res.body.data.map((g: { id: string }) => g.id));
      }
      expect(seen).to.have.length(51);
      expect([...seen].sort()).to.deep.equal([...ids].sort());
      const past = await list(`workspace_id=${ws.id}&offset=51`);
      expect(past.body).to.deep.equal({ data: [], total_count: 51 });
      expect((await list(`workspace_id=${ws.id}&limit=1`)).body.data).to.have.length(1);
      expect((await list(`workspace_id=${ws.id}&limit=100`)).body.data).to.have.length(51);
    });

    it("rejects limit 0 or 101, a negative offset and non-integers with 400", async () => {
      expectError(await list("limit=0"), 400, /limit/);
      expectError(await list("limit=101"), 400, /limit/);
      expectError(await list("limit=-1"), 400, /limit/);
      expectError(await list("offset=-1"), 400, /offset/);
      expectError(await list("limit=2.5"), 400, /limit/);
      expectError(await list("limit=ten"), 400, /limit/);
      expectError(await list("offset=1e2"), 400, /offset/);
      expectError(await list("offset=99999999999"), 400, /offset/);
    });

    it("rejects an unknown query parameter and a malformed workspace_id", async () => {
      expectError(await list("page=2"), 400, /page/);
      expectError(await list("workspace_id=nope"), 400, /workspace_id/);
    });
  });
});
