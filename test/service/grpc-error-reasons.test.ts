import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { SPEECH_LIMITS } from "../../domain/limits.js";
import { metadata, type PlainClient, plainClient, serverStream, unary } from "../kit/grpc-plain.js";
import { errorInfoOf, refusal } from "../kit/grpc-status-details.js";
import { sleep } from "../kit/poll.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

const SPEAK = { model: "railgate/espeak-ng", voice: "alloy", text: "Hi." };

/**
 * What the gateway maps to 402, 409, 413 or 429 is no HTTP status inside the
 * services but a typed reason (railgate.common.v1.ErrorInfo) in the gRPC
 * status details, so any gRPC client tells the cases apart. Read here by a
 * plain @grpc/grpc-js client that decodes grpc-status-details-bin itself.
 */
describe("gRPC services: typed error reasons in grpc-status-details-bin (plain @grpc/grpc-js)", function () {
  this.timeout(60_000);
  let redis: ThrowawayRedis;
  let system: RunningSystem;
  let accounts: PlainClient;
  let guardrails: PlainClient;
  let speech: PlainClient;
  const admin = () => metadata({ key: MANAGEMENT_KEY });

  async function workspace(name: string): Promise<string> {
    const res = (await unary(accounts, "CreateWorkspace", { name }, admin())) as {
      workspace: { id: string };
    };
    return res.workspace.id;
  }

  async function key(workspaceId: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = (await unary(
      accounts,
      "CreateKey",
      { name: "reasons", kind: "KEY_KIND_STANDARD", workspace_id: workspaceId, ...extra },
      admin(),
    )) as { secret: string };
    return res.secret;
  }

  /** A standard key in a new workspace, governed by a guardrail made of `policy`. */
  async function governedKey(name: string, policy: Record<string, unknown>): Promise<string> {
    const ws = await workspace(name);
    const res = (await unary(
      accounts,
      "CreateKey",
      { name, kind: "KEY_KIND_STANDARD", workspace_id: ws },
      admin(),
    )) as { secret: string; key: { hash: string } };
    const g = (await unary(
      guardrails,
      "CreateGuardrail",
      { guardrail: { name, workspace_id: ws, ...policy } },
      admin(),
    )) as { guardrail: { id: string } };
    await unary(
      guardrails,
      "AssignKeys",
      { guardrail_id: g.guardrail.id, key_hashes: [res.key.hash] },
      admin(),
    );
    return res.secret;
  }

  before(async () => {
    redis = await startRedis();
    // These calls speak through the embedded engine (the kit starts systems without it).
    system = await startTestSystem(redis.url, { embeddedEngine: "auto", enginePoolSize: 1 });
    accounts = plainClient("account", system.guardrailGrpcPort);
    guardrails = plainClient("guardrail", system.guardrailGrpcPort);
    speech = plainClient("speech", system.speechGrpcPort);
  });

  after(async () => {
    for (const c of [accounts, guardrails, speech]) c?.close();
    await system?.close();
    await redis?.stop();
  });

  it("insufficient credits: FAILED_PRECONDITION with reason INSUFFICIENT_CREDITS", async () => {
    const ws = await workspace("short of credits");
    // One micro-dollar: less than the three characters of SPEAK cost on the embedded engine.
    await unary(accounts, "AddCredits", { workspace_id: ws, amount_usd: 0.000001 }, admin());
    const err = await refusal(
      serverStream(speech, "Synthesize", SPEAK, metadata({ key: await key(ws) })),
    );
    expect(err.code).to.equal(grpc.status.FAILED_PRECONDITION);
    expect(err.details).to.match(/^Insufficient credits/);
    expect(errorInfoOf(err)).to.deep.equal({ reason: "ERROR_REASON_INSUFFICIENT_CREDITS" });
    // No HTTP status travels as metadata any more: mapping is the gateway's alone.
    expect(err.metadata.get("railgate-http-status")).to.deep.equal([]);
  });

  it("rate limited: RESOURCE_EXHAUSTED with reason RATE_LIMITED and how long to wait", async () => {
    const secret = await key(await workspace("rate limited"), { rate_limit_per_minute: 1 });
    await serverStream(speech, "Synthesize", SPEAK, metadata({ key: secret }));
    const err = await refusal(serverStream(speech, "Synthesize", SPEAK, metadata({ key: secret })));
    expect(err.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
    const info = errorInfoOf(err);
    expect(info?.reason).to.equal("ERROR_REASON_RATE_LIMITED");
    expect(info?.retry_after_seconds).to.be.within(1, 60);
  });

  it("input over the limit: INVALID_ARGUMENT with reason PAYLOAD_TOO_LARGE", async () => {
    const secret = await key(await workspace("long input"));
    const text = "a".repeat(SPEECH_LIMITS.maxInputChars + 1);
    const err = await refusal(
      serverStream(speech, "Synthesize", { ...SPEAK, text }, metadata({ key: secret })),
    );
    expect(err.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(errorInfoOf(err)?.reason).to.equal("ERROR_REASON_PAYLOAD_TOO_LARGE");
  });

  it("a workspace with enabled keys: FAILED_PRECONDITION with reason WORKSPACE_HAS_ENABLED_KEYS", async () => {
    const ws = await workspace("still in use");
    await key(ws);
    const err = await refusal(unary(accounts, "DeleteWorkspace", { id: ws }, admin()));
    expect(err.code).to.equal(grpc.status.FAILED_PRECONDITION);
    expect(errorInfoOf(err)?.reason).to.equal("ERROR_REASON_WORKSPACE_HAS_ENABLED_KEYS");
  });

  it("a region the guardrail leaves out: PERMISSION_DENIED with reason REGION_NOT_ALLOWED", async () => {
    // A direct caller is in its listener's region, global here.
    const secret = await governedKey("europe only", {
      allowed_data_regions: { values: ["REGION_EUROPE"] },
    });
    const err = await refusal(serverStream(speech, "Synthesize", SPEAK, metadata({ key: secret })));
    expect(err.code).to.equal(grpc.status.PERMISSION_DENIED);
    expect(errorInfoOf(err)).to.deep.equal({ reason: "ERROR_REASON_REGION_NOT_ALLOWED" });
  });

  it("a content filter block: PERMISSION_DENIED with reason CONTENT_BLOCKED", async () => {
    const secret = await governedKey("no secrets", {
      content_filters: {
        values: [{ pattern: "secret", action: "FILTER_ACTION_BLOCK", label: "Secrets" }],
      },
    });
    const text = "a secret word";
    const err = await refusal(
      serverStream(speech, "Synthesize", { ...SPEAK, text }, metadata({ key: secret })),
    );
    expect(err.code).to.equal(grpc.status.PERMISSION_DENIED);
    expect(err.details).to.match(/^Request blocked by content filter/);
    expect(errorInfoOf(err)?.reason).to.equal("ERROR_REASON_CONTENT_BLOCKED");
  });

  it("a model outside allowed_models: PERMISSION_DENIED with reason MODEL_NOT_ALLOWED", async () => {
    const secret = await governedKey("other model only", {
      allowed_models: { values: ["openai/gpt-4o-mini-tts"] },
    });
    const err = await refusal(serverStream(speech, "Synthesize", SPEAK, metadata({ key: secret })));
    expect(err.code).to.equal(grpc.status.PERMISSION_DENIED);
    expect(errorInfoOf(err)?.reason).to.equal("ERROR_REASON_MODEL_NOT_ALLOWED");
  });

  it("a key nobody issued: UNAUTHENTICATED with reason API_KEY_INVALID", async () => {
    const err = await refusal(
      serverStream(speech, "Synthesize", SPEAK, metadata({ key: "sk-rg-v1-not-a-key" })),
    );
    expect(err.code).to.equal(grpc.status.UNAUTHENTICATED);
    expect(errorInfoOf(err)?.reason).to.equal("ERROR_REASON_API_KEY_INVALID");
  });

  it("a key past its expires_at: UNAUTHENTICATED with reason API_KEY_EXPIRED, saying when", async () => {
    const ws = await workspace("expiring");
    const res = (await unary(
      accounts,
      "CreateKey",
      { name: "expiring", kind: "KEY_KIND_STANDARD", workspace_id: ws },
      admin(),
    )) as { secret: string; key: { hash: string } };
    // Expired a minute ago: written to the store directly (the API refuses a past date).
    const stored = await system.store.getKey(ws, res.key.hash);
    if (!stored) throw new Error("the key was not stored");
    const expiredAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    stored.expiresAt = timestampFromDate(expiredAt);
    await system.store.putKey(ws, stored);
    let err: grpc.ServiceError | undefined;
    // The services' key cache follows the change through the store's invalidations.
    for (let i = 0; i < 100 && err?.code !== grpc.status.UNAUTHENTICATED; i++) {
      if (i > 0) await sleep(20);
      err = await refusal(
        serverStream(speech, "Synthesize", { ...SPEAK, text: "" }, metadata({ key: res.secret })),
      );
    }
    expect(err?.code).to.equal(grpc.status.UNAUTHENTICATED);
    expect(err && errorInfoOf(err)?.reason).to.equal("ERROR_REASON_API_KEY_EXPIRED");
    // grpc-js decodes grpc-message with decodeURI, which leaves an encoded ":" as "%3A".
    expect(decodeURIComponent(err?.details ?? "")).to.include(
      `API key expired at ${expiredAt.toISOString()}`,
    );
  });

  it("a standard key on a management RPC: PERMISSION_DENIED with reason MANAGEMENT_KEY_REQUIRED", async () => {
    const secret = await key(await workspace("not an admin"));
    const err = await refusal(
      unary(accounts, "CreateWorkspace", { name: "x" }, metadata({ key: secret })),
    );
    expect(err.code).to.equal(grpc.status.PERMISSION_DENIED);
    expect(errorInfoOf(err)?.reason).to.equal("ERROR_REASON_MANAGEMENT_KEY_REQUIRED");
  });

  it("a resource that does not exist: NOT_FOUND with the resource's reason", async () => {
    const err = await refusal(
      unary(accounts, "GetWorkspace", { id: "no-such-workspace" }, admin()),
    );
    expect(err.code).to.equal(grpc.status.NOT_FOUND);
    expect(errorInfoOf(err)?.reason).to.equal("ERROR_REASON_WORKSPACE_NOT_FOUND");
  });

  it("plain input validation gives no reason: the code and the field named say it all", async () => {
    const err = await refusal(unary(accounts, "CreateWorkspace", { name: "  " }, admin()));
    expect(err.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(err.details).to.match(/^name must be/);
    expect(errorInfoOf(err)).to.equal(undefined);
  });
});
