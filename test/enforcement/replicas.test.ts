import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { costMicros, MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio, Gateway, type Key } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";
import { sharedRedisUrl } from "../kit/lane.js";
import { pollUntil } from "../kit/poll.js";

const TEXT = "Replica check.";
const EMAIL_TEXT = "Write to someone@example.com please.";

describe("enforcement: two replicas on one Redis", () => {
  const w = useWorld();
  let b: RunningSystem;
  let A: Gateway;
  let B: Gateway;

  before(async function () {
    this.timeout(180_000);
    A = w.gw;
    // Same Redis, same prefix: a second deployment of the same system.
    b = await w.startSystem(sharedRedisUrl(w.redis));
    B = new Gateway(b);
  });

  after(async () => {
    await b?.close();
  });

  /** Speaks through `gw` until the status is `status` (bounded attempts); returns the last answer's status. */
  async function settlesTo(gw: Gateway, key: Key, body: Record<string, unknown>, status: number) {
    const res = await pollUntil(
      () => gw.speak(key, body),
      (r) => r.status === status,
    );
    return res.status;
  }

  it("both replicas serve the same keys and workspace", async () => {
    expect(b.defaultWorkspaceId).to.equal(w.system.defaultWorkspaceId);
    const ws = await A.workspace();
    const key = await A.key(ws);
    expectAudio(await B.speak(key, { model: MODELS.fast, input: TEXT }));
    expectAudio(await A.speak(key, { model: MODELS.fast, input: TEXT }));
  });

  it("a guardrail assigned through A is enforced by B (whose cache was warm), and un-assigning through A frees B", async () => {
    const ws = await A.workspace();
    const key = await A.key(ws);
    const openai = { model: MODELS.openai, input: TEXT };
    // Warm both replicas' caches with an unrestricted key.
    expectAudio(await B.speak(key, openai));
    expectAudio(await A.speak(key, openai));
    const g = await A.guardrail(ws, { allowed_models: [MODELS.fast] });
    await A.assignKeys(g, key);
    expect(await settlesTo(B, key, openai, 403)).to.equal(403);
    expectError(await B.speak(key, openai), 403, /allowed_models/);
    expectAudio(await B.speak(key, { model: MODELS.fast, input: TEXT }));
    await A.unassignKeys(g, key);
    expect(await settlesTo(B, key, openai, 200)).to.equal(200);
    expectAudio(await B.speak(key, openai));
  });

  it("a blocking filter patched in through B is enforced by A, and removed through B frees A", async () => {
    const ws = await A.workspace();
    const key = await A.key(ws);
    const g = await A.guardrail(ws, {});
    await A.assignKeys(g, key);
    const body = { model: MODELS.fast, input: EMAIL_TEXT };
    expectAudio(await A.speak(key, body));
    expectAudio(await B.speak(key, body));
    await B.patchGuardrail(g, { content_filter_builtins: [{ slug: "email", action: "block" }] });
    expect(await settlesTo(A, key, body, 403)).to.equal(403);
    expectError(await A.speak(key, body), 403, /content filter: Email address$/);
    await B.patchGuardrail(g, { content_filter_builtins: null });
    expect(await settlesTo(A, key, body, 200)).to.equal(200);
  });

  it("a workspace default configured through B restricts A's regions", async () => {
    const ws = await A.workspace();
    const key = await A.key(ws);
    const body = { model: MODELS.fast, input: TEXT };
    expectAudio(await A.speak(key, body));
    await B.setDefault(ws, { allowed_data_regions: ["us"] });
    expect(await settlesTo(A, key, body, 403)).to.equal(403);
    expectAudio(await A.speak(key, body, "us"));
  });

  it("a disabled key is refused by the other replica", async () => {
    const ws = await A.workspace();
    const key = await A.key(ws);
    const body = { model: MODELS.fast, input: TEXT };
    expectAudio(await B.speak(key, body));
    const res = await A.admin.patch(`/api/v1/keys/${key.hash}`, { disabled: true });
    expect(res.status).to.equal(200);
    expect(await settlesTo(B, key, body, 401)).to.equal(401);
  });

  it("a budget is one counter for both replicas", async () => {
    const { key } = await A.governedKey({
      limit_usd: (costMicros(TEXT) * 2) / 1_000_000,
      reset_interval: "daily",
    });
    const body = { model: MODELS.fast, input: TEXT };
    expectAudio(await A.speak(key, body));
    expectAudio(await B.speak(key, body));
    expectError(await A.speak(key, body), 403, /Budget/);
    expectError(await B.speak(key, body), 403, /Budget/);
  });
});
