import { expect } from "chai";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";

const TEXT = "Cache check.";
const EMAIL_TEXT = "Write to someone@example.com please.";

/**
 * Within one process a change must govern the very next request: the
 * governance cache of the replica that made the change is dropped before the
 * change is acknowledged.
 */
describe("enforcement: cache invalidation within one process", () => {
  const w = useWorld();

  it("PATCHing a key's guardrail governs the very next request", async () => {
    const { key, guardrailId } = await w.gw.governedKey({});
    const openai = { model: MODELS.openai, input: TEXT };
    expectAudio(await w.gw.speak(key, openai));
    await w.gw.patchGuardrail(guardrailId, { allowed_models: [MODELS.fast] });
    expectError(await w.gw.speak(key, openai), 403, /allowed_models/);
    await w.gw.patchGuardrail(guardrailId, { allowed_models: null });
    expectAudio(await w.gw.speak(key, openai));
  });

  it("assigning and un-assigning a guardrail governs the very next request", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const body = { model: MODELS.fast, input: EMAIL_TEXT };
    expectAudio(await w.gw.speak(key, body));
    const g = await w.gw.guardrail(ws, {
      content_filter_builtins: [{ slug: "email", action: "block" }],
    });
    // Created but not assigned: enforces nothing.
    expectAudio(await w.gw.speak(key, body));
    await w.gw.assignKeys(g, key);
    expectError(await w.gw.speak(key, body), 403, /: Email address$/);
    await w.gw.unassignKeys(g, key);
    expectAudio(await w.gw.speak(key, body));
  });

  it("materializing the workspace default governs the very next request", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const body = { model: MODELS.fast, input: TEXT };
    expectAudio(await w.gw.speak(key, body));
    await w.gw.setDefault(ws, { allowed_data_regions: ["europe"] });
    expectError(await w.gw.speak(key, body), 403, /region/);
    expectAudio(await w.gw.speak(key, body, "europe"));
  });

  it("a member assignment governs the member's keys at once", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws, { member_user_id: "user-cache" });
    const body = { model: MODELS.openai, input: TEXT };
    expectAudio(await w.gw.speak(key, body), "oai-retaining");
    const g = await w.gw.guardrail(ws, { enforce_zdr_openai: true });
    await w.gw.assignMembers(g, "user-cache");
    expectAudio(await w.gw.speak(key, body), "oai-zdr");
  });

  it("deleting a guardrail lifts its rules at once", async () => {
    const { key, guardrailId } = await w.gw.governedKey({ ignored_models: [MODELS.fast] });
    const body = { model: MODELS.fast, input: TEXT };
    expectError(await w.gw.speak(key, body), 403, /ignored_models/);
    const res = await w.gw.admin.delete(`/api/v1/guardrails/${guardrailId}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expectAudio(await w.gw.speak(key, body));
  });
});
