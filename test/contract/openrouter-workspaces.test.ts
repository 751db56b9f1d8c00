import { expect } from "chai";
import { refused, unique, useContractSystem, valid } from "../kit/contract-clients.js";

describe("contract: @openrouter/sdk workspaces", () => {
  const h = useContractSystem();

  it("create / get / update / list / delete", async () => {
    const name = unique("sdk workspace");
    const slug = `sdk-ws-${process.pid}-${Date.now().toString(36)}`;
    const created = await valid(
      h.admin.workspaces.create({
        createWorkspaceRequest: { name, slug, description: "By the SDK" },
      }),
    );
    const id = created.data.id;
    expect(created.data).to.include({ name, slug, description: "By the SDK" });
    expect(created.data.defaultGuardrailId).to.be.a("string").that.is.not.empty;
    const got = await valid(h.admin.workspaces.get({ id }));
    expect(got.data.id).to.equal(id);
    const updated = await valid(
      h.admin.workspaces.update({ id, updateWorkspaceRequest: { name: `${name} (renamed)` } }),
    );
    expect(updated.data.name).to.equal(`${name} (renamed)`);
    const page = await valid(h.admin.workspaces.list({ limit: 100 }));
    expect(page.result.data.map((w) => w.id)).to.include(id);
    const deleted = await valid(h.admin.workspaces.delete({ id }));
    expect(deleted.deleted).to.equal(true);
    await refused(h.admin.workspaces.get({ id }), 404);
  });

  it("a workspace with active keys cannot be deleted", async () => {
    const created = await valid(
      h.admin.workspaces.create({
        createWorkspaceRequest: {
          name: unique("busy"),
          slug: `busy-${process.pid}-${Date.now().toString(36)}`,
        },
      }),
    );
    await h.speech.createKey({ workspace_id: created.data.id });
    // Refused as a bad request or a conflict (the keys must go first), in the SDK's error shape.
    await refused(h.admin.workspaces.delete({ id: created.data.id }), [400, 409], /key/);
    await valid(h.admin.workspaces.get({ id: created.data.id }));
  });
});
