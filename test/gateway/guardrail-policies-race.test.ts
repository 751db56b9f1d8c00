import { expect } from "chai";
import { expectStatus } from "../kit/expect.js";
import { createWorkspace, useSystem } from "../kit/gateway-harness.js";

const ROUNDS = 6;
const PATCHES = 16;

/**
 * A guardrail write racing the first policy write of a type in its workspace (which turns the
 * guardrails' parts of that type into policies): a write answered 200 must be in the policies
 * the move made, never land on a part that no longer governs; the others are refused.
 */
describe("gateway: guardrail writes racing a policy type's move to policies", () => {
  const h = useSystem();

  it("every guardrail PATCH answered 200 is in the policy that replaced the guardrail's budget; the rest are 400 or 409", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const ws = await createWorkspace(h.api);
      const created = await h.api.post("/api/v1/guardrails", {
        name: `Raced ${round}`,
        workspace_id: ws.id,
        limit_usd: 10,
        reset_interval: "monthly",
      });
      expectStatus(created, 201);
      const id = created.body.data.id as string;
      // The PATCHes go out one by one, each a little later, while the move reads and writes:
      // some land before it, some while it maps the guardrails, some after it.
      const patches = Array.from({ length: PATCHES }, async (_, i) => {
        await new Promise((resolve) => setTimeout(resolve, i % 8));
        return h.api.patch(`/api/v1/guardrails/${id}`, { limit_usd: 100 + i });
      });
      const move = h.api.post("/api/v1/guardrails/policies/budget", {
        name: `Moved ${round}`,
        policy_type: "budget",
        workspace_id: ws.id,
        config: { limit_usd: 1, reset_interval: "daily" },
      });
      const answers = await Promise.all(patches);
      const moved = await move;
      expect([201, 409], JSON.stringify(moved.body)).to.include(moved.status);
      for (const res of answers) {
        expect([200, 400, 409], JSON.stringify(res.body)).to.include(res.status);
        if (res.status === 400)
          expect(res.body.error.message).to.match(/^limit_usd cannot change here: budget/);
      }
      const accepted = answers.filter((r) => r.status === 200);
      if (moved.status === 409) continue;
      // What the guardrail holds is the last PATCH it accepted; after the move none may change
      // it, so the policy that replaced its budget must hold the same.
      const stored = (await h.api.get(`/api/v1/guardrails/${id}`)).body.data;
      const policy = await h.api.get(`/api/v1/guardrails/policies/budget/${id}`);
      expectStatus(policy, 200);
      expect(policy.body.data.config.limit_usd, `round ${round}`).to.equal(stored.limit_usd);
      const values = accepted.map((r) => r.body.data.limit_usd as number);
      expect([10, ...values]).to.include(stored.limit_usd);
      // Moved: a PATCH of the budget is refused from now on.
      const after = await h.api.patch(`/api/v1/guardrails/${id}`, { limit_usd: 999 });
      expect(after.status).to.equal(400);
    }
  });
});
