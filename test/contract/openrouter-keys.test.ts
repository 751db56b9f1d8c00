import { expect } from "chai";
import { refused, unique, useContractSystem, valid } from "../kit/contract-clients.js";
import { MODELS } from "../kit/speech-catalog.js";

describe("contract: @openrouter/sdk apiKeys, credits", () => {
  const h = useContractSystem();

  it("apiKeys.create / get / update / list / delete", async () => {
    const created = await valid(
      h.admin.apiKeys.create({ requestBody: { name: unique("sdk key"), limit: 5 } }),
    );
    expect(created.key).to.be.a("string").that.is.not.empty;
    const hash = created.data.hash;
    expect(created.data).to.include({ limit: 5, limitRemaining: 5, usage: 0, disabled: false });
    const got = await valid(h.admin.apiKeys.get({ hash }));
    expect(got.data.name).to.equal(created.data.name);
    const updated = await valid(
      h.admin.apiKeys.update({ hash, requestBody: { name: "renamed by the SDK", disabled: true } }),
    );
    expect(updated.data).to.include({ name: "renamed by the SDK", disabled: true });
    const list = await valid(h.admin.apiKeys.list({ includeDisabled: true }));
    expect(list.data.map((k) => k.hash)).to.include(hash);
    const deleted = await valid(h.admin.apiKeys.delete({ hash }));
    expect(deleted.deleted).to.equal(true);
    await refused(h.admin.apiKeys.get({ hash }), 404);
  });

  it("apiKeys.create / update with limitReset and expiresAt", async () => {
    const expiresAt = new Date("2099-06-30T12:00:00.000Z");
    const created = await valid(
      h.admin.apiKeys.create({
        requestBody: { name: unique("windowed"), limit: 2, limitReset: "weekly", expiresAt },
      }),
    );
    expect(created.data).to.include({ limit: 2, limitRemaining: 2, limitReset: "weekly" });
    expect(created.data.expiresAt?.toISOString()).to.equal(expiresAt.toISOString());
    const hash = created.data.hash;
    const updated = await valid(
      h.admin.apiKeys.update({ hash, requestBody: { limitReset: "daily" } }),
    );
    expect(updated.data.limitReset).to.equal("daily");
    const me = await valid(h.sdk(created.key).apiKeys.getCurrentKeyMetadata());
    expect(me.data.limitReset).to.equal("daily");
    expect(me.data.expiresAt?.toISOString()).to.equal(expiresAt.toISOString());
    await refused(
      h.admin.apiKeys.create({
        requestBody: { name: unique("expired"), expiresAt: new Date("2020-01-01T00:00:00Z") },
      }),
      400,
      /expires_at must be in the future/,
    );
  });

  it("apiKeys.list() lists the management keys too (workspace_id a string)", async () => {
    const list = await valid(h.admin.apiKeys.list());
    expect(list.data.some((k) => k.workspaceId === "")).to.equal(true);
  });

  it("apiKeys.getCurrentKeyMetadata() for a standard key carries what it spent", async () => {
    const key = await h.speech.createKey({ limit: 1 });
    const res = await h.speech.speak(
      { model: MODELS.basic, voice: "alloy", input: "Spend." },
      { key: key.secret },
    );
    expect(res.status).to.equal(200);
    await h.speech.waitForGeneration(res.headers.get("x-generation-id") ?? "", () => true);
    const me = await valid(h.sdk(key.secret).apiKeys.getCurrentKeyMetadata());
    const cost = ("Spend.".length * 20) / 1_000_000;
    expect(me.data).to.include({
      isManagementKey: false,
      isProvisioningKey: false,
      isFreeTier: false,
      limit: 1,
      usage: cost,
      usageDaily: cost,
      byokUsage: 0,
    });
    expect(me.data.limitRemaining).to.be.closeTo(1 - cost, 1e-12);
    expect(me.data.allowedDataRegions).to.deep.equal(["global", "europe", "us"]);
    expect(me.data.rateLimit.requests).to.equal(600);
  });

  it("apiKeys.getCurrentKeyMetadata() for the management key", async () => {
    const me = await valid(h.admin.apiKeys.getCurrentKeyMetadata());
    expect(me.data.isManagementKey).to.equal(true);
    expect(me.data.workspaceId).to.equal(null);
  });

  it("apiKeys.* need a management key: 403 the SDK parses", async () => {
    await refused(h.user.apiKeys.list(), 403);
    await refused(h.sdk("not-a-key-of-this-deployment").apiKeys.list(), 401);
  });

  it("credits.getCredits(): what was added and what it paid for", async () => {
    const before = await valid(h.admin.credits.getCredits());
    const ws = h.speech.key.workspaceId;
    const added = await h.speech.admin.post(`/api/v1/workspaces/${ws}/credits`, { amount_usd: 10 });
    expect(added.status).to.equal(200);
    const res = await h.speech.speak({ model: MODELS.basic, voice: "alloy", input: "Paid." });
    expect(res.status).to.equal(200);
    await h.speech.waitForGeneration(res.headers.get("x-generation-id") ?? "");
    const after = await valid(h.admin.credits.getCredits());
    expect(after.data.totalCredits - before.data.totalCredits).to.be.closeTo(10, 1e-9);
    expect(after.data.totalUsage - before.data.totalUsage).to.be.closeTo(
      ("Paid.".length * 20) / 1_000_000,
      1e-12,
    );
    await refused(h.user.credits.getCredits(), 403);
  });
});
