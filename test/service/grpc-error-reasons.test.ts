import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { SPEECH_LIMITS } from "../../platform/limits.js";
import { metadata, type PlainClient, plainClient, serverStream, unary } from "../kit/grpc-plain.js";
import { errorInfoOf, refusal } from "../kit/grpc-status-details.js";
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

  before(async () => {
    redis = await startRedis();
    // These calls speak through the embedded engine (the kit starts systems without it).
    system = await startTestSystem(redis.url, { embeddedEngine: "auto", enginePoolSize: 1 });
    accounts = plainClient("account", system.guardrailGrpcPort);
    speech = plainClient("speech", system.speechGrpcPort);
  });

  after(async () => {
    for (const c of [accounts, speech]) c?.close();
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

  it("an error the code says all about gives no reason", async () => {
    const err = await refusal(
      unary(accounts, "GetWorkspace", { id: "no-such-workspace" }, admin()),
    );
    expect(err.code).to.equal(grpc.status.NOT_FOUND);
    expect(errorInfoOf(err)).to.equal(undefined);
  });
});
