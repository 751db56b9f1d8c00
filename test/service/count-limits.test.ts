import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { startGuardrailServer } from "../../apps/control-plane/server.js";
import type { CountLimits } from "../../domain/limits.js";
import { errorStatusOf } from "../../gateway/error-status.js";
import { KeyKind } from "../../gen/railgate/account/v1/account_pb.js";
import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { errorInfoOf } from "../../platform/rpc/errors.js";
import { RedisStore } from "../../store/redis-store.js";
import { bearer } from "../kit/connect-auth.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/** Small limits so that the services can be driven to them over real gRPC. */
const SMALL: CountLimits = {
  workspaces: 2,
  guardrailsPerWorkspace: 2,
  keysPerWorkspace: 2,
  // The operator key (RAILGATE_MANAGEMENT_KEY) is one of them.
  managementKeys: 2,
  keyAssignmentsPerWorkspace: 2,
  memberAssignmentsPerWorkspace: 2,
};

async function refusal(call: Promise<unknown>): Promise<ConnectError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  if (!err) throw new Error("expected the call to be refused");
  return err;
}

/**
 * A count limit gives its reason over gRPC, which the gateway answers with 409
 * (not 429: retrying will not help), and names the limit.
 */
function expectLimit(err: ConnectError, message: RegExp): void {
  expect(err.code).to.equal(Code.ResourceExhausted);
  expect(errorInfoOf(err)?.reason).to.equal(ErrorReason.COUNT_LIMIT_REACHED);
  expect(errorStatusOf(err).status).to.equal(409);
  expect(err.rawMessage).to.match(message);
}

describe("Services: count limits answer 409 naming the limit", () => {
  let redis: ThrowawayRedis;
  let store: RedisStore;
  let server: Awaited<ReturnType<typeof startGuardrailServer>>;
  let accounts: ReturnType<typeof createClient<typeof AccountService>>;
  let guardrails: ReturnType<typeof createClient<typeof GuardrailService>>;

  before(async () => {
    redis = await startRedis();
    store = new RedisStore(redis.client(), "rg", SMALL);
    server = await startGuardrailServer(store, 0, "127.0.0.1", { managementKey: MANAGEMENT_KEY });
    const transport = createGrpcTransport({
      baseUrl: `http://127.0.0.1:${server.port}`,
      interceptors: [bearer(MANAGEMENT_KEY)],
    });
    accounts = createClient(AccountService, transport);
    guardrails = createClient(GuardrailService, transport);
  });

  after(async () => {
    await server?.close();
    await store?.close();
    await redis?.stop();
  });

  it("refuses a workspace past the deployment's limit (the default workspace counts)", async () => {
    await accounts.createWorkspace({ name: "second" });
    expectLimit(
      await refusal(accounts.createWorkspace({ name: "third" })),
      /the deployment already has 2 workspaces \(the maximum is 2\)/,
    );
    expect((await accounts.listWorkspaces({})).totalCount).to.equal(2);
  });

  it("refuses a guardrail past the workspace's limit", async () => {
    const ws = server.defaultWorkspaceId ?? "";
    await guardrails.createGuardrail({ guardrail: { name: "a" } });
    await guardrails.createGuardrail({ guardrail: { name: "b" } });
    expectLimit(
      await refusal(guardrails.createGuardrail({ guardrail: { name: "c" } })),
      new RegExp(`workspace ${ws} already has 2 guardrails \\(the maximum is 2\\)`),
    );
    // The workspace default is not one of them: it can still be materialized.
    const def = await guardrails.getWorkspaceDefault({ workspaceId: ws });
    const updated = await guardrails.updateGuardrail({
      id: def.guardrailId,
      guardrail: { description: "materialized" },
      updateMask: { paths: ["description"] },
    });
    expect(updated.guardrail?.description).to.equal("materialized");
  });

  it("refuses keys past the workspace's limit and management keys past the organization's", async () => {
    const ws = server.defaultWorkspaceId ?? "";
    await accounts.createKey({ name: "k1", kind: KeyKind.STANDARD });
    await accounts.createKey({ name: "k2", kind: KeyKind.STANDARD });
    expectLimit(
      await refusal(accounts.createKey({ name: "k3", kind: KeyKind.STANDARD })),
      new RegExp(`workspace ${ws} already has 2 keys \\(the maximum is 2\\)`),
    );
    await accounts.createKey({ name: "m1", kind: KeyKind.MANAGEMENT });
    expectLimit(
      await refusal(accounts.createKey({ name: "m2", kind: KeyKind.MANAGEMENT })),
      /the organization already has 2 management keys \(the maximum is 2\)/,
    );
  });

  it("refuses assigning more members than remain, as a whole", async () => {
    const { guardrails: list } = await guardrails.listGuardrails({});
    const g = list.find((x) => x.name === "a");
    const ws = g?.workspaceId ?? "";
    await guardrails.assignMembers({ guardrailId: g?.id ?? "", memberUserIds: ["u1"] });
    expectLimit(
      await refusal(
        guardrails.assignMembers({ guardrailId: g?.id ?? "", memberUserIds: ["u2", "u3"] }),
      ),
      new RegExp(
        `workspace ${ws} already has 1 member assignments; assigning 2 more would exceed the maximum of 2`,
      ),
    );
    expect((await guardrails.listMemberAssignments({})).totalCount).to.equal(1);
    // What fits is accepted.
    const ok = await guardrails.assignMembers({ guardrailId: g?.id ?? "", memberUserIds: ["u2"] });
    expect(ok.assignedCount).to.equal(1);
  });
});
