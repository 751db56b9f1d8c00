import { expect } from "chai";
import { refused, unique, useContractSystem, valid } from "../kit/contract-clients.js";

describe("contract: @openrouter/sdk guardrails", () => {
  const h = useContractSystem();

  it("create / get / update / list / delete", async () => {
    const created = await valid(
      h.admin.guardrails.create({
        createGuardrailRequest: {
          name: unique("sdk guardrail"),
          description: "Made by @openrouter/sdk",
          allowedModels: ["acme/tts-basic"],
          allowedDataRegions: ["europe"],
          limitUsd: 5,
          resetInterval: "daily",
          enforceZdrOpenai: true,
          contentFilterBuiltins: [{ slug: "email", action: "redact" }],
          contentFilters: [{ pattern: "secret-\\d+", action: "block" }],
        },
      }),
    );
    const id = created.data.id;
    expect(created.data).to.include({ limitUsd: 5, resetInterval: "daily", updatedAt: null });
    expect(created.data.workspaceId).to.equal(h.speech.key.workspaceId);
    const got = await valid(h.admin.guardrails.get({ id }));
    expect(got.data.name).to.equal(created.data.name);
    const updated = await valid(
      h.admin.guardrails.update({
        id,
        updateGuardrailRequest: { description: "Updated by the SDK", contentFilters: null },
      }),
    );
    expect(updated.data.description).to.equal("Updated by the SDK");
    expect(updated.data.updatedAt).to.be.a("string");
    const page = await valid(
      h.admin.guardrails.list({ workspaceId: h.speech.key.workspaceId, limit: 100 }),
    );
    expect(page.result.data.map((g) => g.id)).to.include(id);
    expect(page.result.totalCount).to.be.at.least(1);
    const deleted = await valid(h.admin.guardrails.delete({ id }));
    expect(deleted.deleted).to.equal(true);
    await refused(h.admin.guardrails.get({ id }), 404);
  });

  it("list() without a workspace lists the default workspace's", async () => {
    const g = await valid(
      h.admin.guardrails.create({ createGuardrailRequest: { name: unique("default ws") } }),
    );
    const page = await valid(h.admin.guardrails.list());
    expect(page.result.data.map((x) => x.id)).to.include(g.data.id);
  });

  it("nullable fields take null, as OpenRouter's schema allows", async () => {
    const created = await valid(
      h.admin.guardrails.create({
        createGuardrailRequest: {
          name: unique("nulls"),
          description: null,
          allowedModels: null,
          enforceZdrAnthropic: null,
          enableFreeModelTraining: null,
          limitUsd: null,
          resetInterval: null,
          contentFilters: [],
          contentFilterBuiltins: [],
        },
      }),
    );
    expect(created.data.name).to.match(/^nulls/);
  });

  describe("the spec's limits, as the SDK sends them", () => {
    it("name: 1 to 200 characters", async () => {
      await valid(h.admin.guardrails.create({ createGuardrailRequest: { name: "n".repeat(200) } }));
      await refused(
        h.admin.guardrails.create({ createGuardrailRequest: { name: "n".repeat(201) } }),
        400,
        /name/,
      );
      await refused(
        h.admin.guardrails.create({ createGuardrailRequest: { name: "" } }),
        400,
        /name/,
      );
    });

    it("description: at most 1000 characters", async () => {
      await valid(
        h.admin.guardrails.create({
          createGuardrailRequest: { name: unique("d"), description: "d".repeat(1000) },
        }),
      );
      await refused(
        h.admin.guardrails.create({
          createGuardrailRequest: { name: unique("d"), description: "d".repeat(1001) },
        }),
        400,
        /description/,
      );
    });

    it("allowed_data_regions: at least 1 element", async () => {
      await refused(
        h.admin.guardrails.create({
          createGuardrailRequest: { name: unique("r"), allowedDataRegions: [] },
        }),
        400,
        /allowed_data_regions/,
      );
    });

    it("limit_usd and reset_interval together", async () => {
      await refused(
        h.admin.guardrails.create({ createGuardrailRequest: { name: unique("l"), limitUsd: 1 } }),
        400,
        /reset_interval/,
      );
    });
  });

  it("a standard key gets 403, no key 401, both parsed by the SDK", async () => {
    await refused(h.user.guardrails.list(), 403);
    await refused(h.sdk("").guardrails.list(), 401);
  });
});
