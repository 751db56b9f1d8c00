import { expect } from "chai";
import { expectStatus } from "../kit/expect.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, useSpeechSystem } from "../kit/speech-system.js";

/**
 * RFC 4122: UUIDs are "case insensitive on input" and output in lower case. Ids in paths,
 * query parameters and bodies are taken in either case and stored and answered in lower case.
 */
describe("contract: UUIDs in upper case are accepted and stored in lower case", () => {
  const h = useSpeechSystem();

  it("workspaces, guardrails and keys: in paths, queries and bodies", async () => {
    const ws = await h.admin.post("/api/v1/workspaces", { name: `Upper Case ${Date.now()}` });
    expectStatus(ws, 201);
    const id: string = ws.body.data.id;
    const ID = id.toUpperCase();
    expect(ID).not.to.equal(id);

    const got = await h.admin.get(`/api/v1/workspaces/${ID}`);
    expectStatus(got, 200);
    expect(got.body.data.id).to.equal(id);

    const created = await h.admin.post("/api/v1/guardrails", { name: "upper", workspace_id: ID });
    expectStatus(created, 201);
    expect(created.body.data.workspace_id).to.equal(id);
    const guardrail: string = created.body.data.id;
    const GUARDRAIL = guardrail.toUpperCase();

    const byId = await h.admin.get(`/api/v1/guardrails/${GUARDRAIL}`);
    expectStatus(byId, 200);
    expect(byId.body.data.id).to.equal(guardrail);
    expectStatus(
      await h.admin.patch(`/api/v1/guardrails/${GUARDRAIL}`, { description: "patched" }),
      200,
    );
    const listed = await h.admin.get(`/api/v1/guardrails?workspace_id=${ID}`);
    expectStatus(listed, 200);
    // biome-ignore lint/suspicious/noExplicitAny: guardrail JSON
    expect(listed.body.data.map((g: any) => g.id)).to.include(guardrail);

    const key = await h.admin.post("/api/v1/keys", { name: "upper key", workspace_id: ID });
    expectStatus(key, 201);
    expect(key.body.data.workspace_id).to.equal(id);

    expectStatus(await h.admin.delete(`/api/v1/guardrails/${GUARDRAIL}`), 200);
    expectStatus(await h.admin.get(`/api/v1/guardrails/${guardrail}`), 404);
  });

  it("generation ids: GET /generation?id= in upper case finds the record", async () => {
    const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: "Upper case ids." });
    expectAudio(res);
    const id = res.headers.get("x-generation-id") ?? "";
    await h.waitForGeneration(id);
    const upper = await h.generation(id.toUpperCase());
    expectStatus(upper, 200);
    expect(upper.body.data.id).to.equal(id);
  });

  it("still refuses what is not a UUID, naming the field", async () => {
    const res = await h.admin.post("/api/v1/guardrails", {
      name: "not a uuid",
      workspace_id: "ABCDEFGH-not-a-uuid",
    });
    expectStatus(res, 400);
    expect(res.body.error.message).to.match(/workspace_id/);
  });
});
