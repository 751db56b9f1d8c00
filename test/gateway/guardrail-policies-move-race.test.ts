import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { startGuardrailServer } from "../../apps/control-plane/server.js";
import { guardrailInputFromJson } from "../../gateway/json/guardrail-json.js";
import { policyInputFromJson } from "../../gateway/json/guardrail-policy-json.js";
import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailPolicyService } from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { MemoryStore } from "../../store/memory-store.js";
import { createRedisClient } from "../../store/open-store.js";
import type { PolicyDoc, PolicyDocStore } from "../../store/policies/types.js";
import { RedisStore } from "../../store/redis-store.js";
import type { Store } from "../../store/types.js";
import { type LaneStore, startLaneStore } from "../kit/lane.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/**
 * The store's own policy documents, with a pause the test fills once: right after the next
 * read (a guardrail write has just decided the type is not managed) or right before the next
 * write (a move has just mapped the guardrails it read). Everything else is the store's.
 */
class PausedDocs implements PolicyDocStore {
  afterRead?: () => Promise<void>;
  beforeWrite?: () => Promise<void>;
  constructor(private readonly docs: PolicyDocStore) {}

  async read(workspaceId: string) {
    const read = await this.docs.read(workspaceId);
    const pause = this.afterRead;
    this.afterRead = undefined;
    await pause?.();
    return read;
  }

  async write(workspaceId: string, version: number, doc: PolicyDoc, guardrailWrites?: number) {
    const pause = this.beforeWrite;
    this.beforeWrite = undefined;
    await pause?.();
    return this.docs.write(workspaceId, version, doc, guardrailWrites);
  }

  workspaceOf(policyId: string) {
    return this.docs.workspaceOf(policyId);
  }

  index(policyId: string, workspaceId: string | undefined) {
    return this.docs.index(policyId, workspaceId);
  }
}

/**
 * A guardrail write and the first policy write of its type in the workspace (which turns the
 * guardrails' parts of that type into policies), interleaved both ways at the one point where
 * each has read what the other changes: the guardrail write answered OK is in the policies,
 * or it is refused; never accepted on a part that no longer governs. On the lane's store: the
 * embedded one in the fast lane, Redis in the full one.
 */
describe("guardrail writes racing a policy type's move to policies", () => {
  let lane: LaneStore;
  let store: Store;
  let docs: PausedDocs;
  let server: Awaited<ReturnType<typeof startGuardrailServer>>;
  let guardrails: ReturnType<typeof createClient<typeof GuardrailService>>;
  let policies: ReturnType<typeof createClient<typeof GuardrailPolicyService>>;
  let accounts: ReturnType<typeof createClient<typeof AccountService>>;

  before(async () => {
    lane = await startLaneStore();
    let real: Store = new MemoryStore();
    if (lane.url !== undefined) {
      const client = createRedisClient({ redisUrl: lane.url, redisClusterNodes: undefined });
      await client.connect();
      real = new RedisStore(client, "race");
    }
    docs = new PausedDocs(real.openPolicyDocs());
    // The store itself, but every service opens the paused documents.
    store = new Proxy(real, {
      get(target, name) {
        if (name === "openPolicyDocs") return () => docs;
        const value = Reflect.get(target, name, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    server = await startGuardrailServer(store, 0, "127.0.0.1", {
      managementKey: MANAGEMENT_KEY,
    });
    const bearer: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${MANAGEMENT_KEY}`);
      return next(req);
    };
    const transport = createGrpcTransport({
      baseUrl: `http://127.0.0.1:${server.port}`,
      interceptors: [bearer],
    });
    guardrails = createClient(GuardrailService, transport);
    policies = createClient(GuardrailPolicyService, transport);
    accounts = createClient(AccountService, transport);
  });

  after(async () => {
    await server?.close();
    await store?.close();
    await lane?.stop();
  });

  async function budgetGuardrail(): Promise<{ workspaceId: string; id: string }> {
    const ws = (await accounts.createWorkspace({ name: `race ${Math.random()}` })).workspace;
    const workspaceId = ws?.id ?? "";
    const { input } = guardrailInputFromJson({
      name: "Raced",
      workspace_id: workspaceId,
      limit_usd: 10,
      reset_interval: "monthly",
    });
    const g = (await guardrails.createGuardrail({ guardrail: input })).guardrail;
    return { workspaceId, id: g?.id ?? "" };
  }

  const patchLimit = (id: string, limitUsd: number) => {
    const { input, paths } = guardrailInputFromJson({ limit_usd: limitUsd });
    return guardrails.updateGuardrail({ id, guardrail: input, updateMask: { paths } });
  };

  const moveBudget = (workspaceId: string) =>
    policies.createGuardrailPolicy({
      policy: policyInputFromJson(
        {
          name: "Moved",
          policy_type: "budget",
          workspace_id: workspaceId,
          config: { limit_usd: 1, reset_interval: "daily" },
        },
        "budget",
        "create",
      ),
    });

  const replacedLimit = async (id: string) =>
    (await policies.getGuardrailPolicy({ policyType: "budget", id })).policy?.config?.limit_usd;

  it("a PATCH that read the type unmanaged and lands after the move is refused, not lost", async () => {
    const { workspaceId, id } = await budgetGuardrail();
    // The PATCH has read the document (budget not managed yet); the move runs to the end.
    docs.afterRead = async () => {
      await moveBudget(workspaceId);
    };
    const err = await patchLimit(id, 20).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err?.code).to.equal(Code.InvalidArgument);
    expect(err?.rawMessage).to.match(/^limit_usd cannot change here: budget settings/);
    expect(await replacedLimit(id)).to.equal(10);
    expect((await guardrails.getGuardrail({ id })).guardrail?.limitUsd).to.equal(10);
  });

  it("a PATCH that lands after the move read the guardrails is in the policy the move makes", async () => {
    const { workspaceId, id } = await budgetGuardrail();
    // The move has mapped the guardrails it read; the PATCH runs to the end before it writes.
    let patched: number | undefined;
    docs.beforeWrite = async () => {
      patched = (await patchLimit(id, 30)).guardrail?.limitUsd;
    };
    await moveBudget(workspaceId);
    expect(patched).to.equal(30);
    expect(await replacedLimit(id)).to.equal(30);
  });

  it("a move that keeps meeting guardrail writes is refused with 409 and moves nothing", async () => {
    const { workspaceId, id } = await budgetGuardrail();
    let limit = 40;
    const racing = async () => {
      await patchLimit(id, ++limit);
      docs.beforeWrite = racing;
    };
    docs.beforeWrite = racing;
    const err = await moveBudget(workspaceId).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    docs.beforeWrite = undefined;
    expect(err?.code).to.equal(Code.Aborted);
    // Still the guardrails' own: the last PATCH governs and a PATCH is still accepted.
    expect((await patchLimit(id, 99)).guardrail?.limitUsd).to.equal(99);
    // The budget policy there is still the guardrail's read-only view, following it.
    const view = (await policies.getGuardrailPolicy({ policyType: "budget", id })).policy;
    expect(view?.legacyGuardrailIds).to.deep.equal([id]);
    expect(view?.config?.limit_usd).to.equal(99);
  });
});
