import { expect } from "chai";
import { expectError } from "../kit/expect.js";
import { createWorkspace, sendRaw, useSystem } from "../kit/gateway-harness.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/**
 * JSON may spell half of a UTF-16 surrogate pair (`"\udfff"`), which no protobuf string can
 * carry: the gateway refuses the body naming the field, on every store and transport alike,
 * instead of an internal error (or the character quietly replaced).
 */
describe("gateway: a lone UTF-16 surrogate in a JSON body", () => {
  const h = useSystem();

  it("is refused with 400 naming the field, on create and on update", async () => {
    const created = await h.api.post("/api/v1/workspaces", { name: "a\udfffb" });
    expectError(created, 400, /^name must be valid Unicode text: .*lone UTF-16 surrogate/);
    const ws = await createWorkspace(h.api);
    const updated = await h.api.patch(`/api/v1/workspaces/${ws.id}`, { name: "\ud800" });
    expectError(updated, 400, /^name must be valid Unicode text/);
    const key = await h.api.post("/api/v1/keys", { name: "x", member_user_id: "\ud800" });
    expectError(key, 400, /^member_user_id must be valid Unicode text/);
  });

  it("names the place inside arrays and objects, and a key of the body", async () => {
    const nested = await h.api.post("/api/v1/guardrails", {
      name: "lone surrogate",
      allowed_models: ["railgate/espeak-ng", "x\udc00"],
    });
    expectError(nested, 400, /^allowed_models\[1\] must be valid Unicode text/);
    const key = await h.api.post("/api/v1/workspaces", { name: "fine", "\ud800": 1 });
    expectError(key, 400, /^a key of the body must be valid Unicode text/);
  });

  it("takes a whole pair and escapes of other characters as they are", async () => {
    const res = await sendRaw(`${h.baseUrl()}/api/v1/workspaces`, {
      method: "POST",
      headers: { authorization: `Bearer ${MANAGEMENT_KEY}`, "content-type": "application/json" },
      // The JSON text itself spells the escapes (JSON.stringify would write the characters).
      chunks: [String.raw`{"name":"voice \ud83d\ude00 team \u00e9"}`],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect((res.body as { data: { name: string } }).data.name).to.equal("voice 😀 team é");
  });
});
