import { clone } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { startGuardrailServer } from "../../apps/control-plane/server.js";
import { errorStatusOf } from "../../gateway/error-status.js";
import { GuardrailSchema, ResetInterval } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { RedisStore } from "../../store/redis-store.js";
import type { GuardrailPatch } from "../../store/types.js";
import { bearer } from "../kit/connect-auth.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/**
 * A store on a real Redis where another writer always gets in first: each
 * time the service is about to write, a competing update of `field` lands.
 * When the service's patch was validated against that field (limit_usd is
 * checked with reset_interval), every attempt must lose and end in 409 without
 * writing a stale record; when it was not, the patch must land at once.
 */
class AlwaysRacedStore extends RedisStore {
  competitorWrites = 0;
  attempts = 0;
  field: "reset_interval" | "description" = "reset_interval";

  override async patchGuardrail(p: GuardrailPatch) {
    this.attempts++;
    const current = await this.getGuardrail(p.workspaceId, p.id);
    if (current) {
      const next = clone(GuardrailSchema, current.value);
      const n = ++this.competitorWrites;
      if (this.field === "reset_interval")
        next.resetInterval = n % 2 ? ResetInterval.WEEKLY : ResetInterval.MONTHLY;
      else next.description = `competitor ${n}`;
      await super.patchGuardrail({
        ...p,
        readVersion: current.version,
        fields: [this.field],
        next,
        unchanged: [],
        read: current.value,
        materialize: false,
      });
    }
    return super.patchGuardrail(p);
  }
}

describe("GuardrailService: update conflicts", () => {
  let redis: ThrowawayRedis;
  let store: AlwaysRacedStore;
  let server: Awaited<ReturnType<typeof startGuardrailServer>>;
  let client: ReturnType<typeof createClient<typeof GuardrailService>>;

  before(async () => {
    redis = await startRedis();
    store = new AlwaysRacedStore(redis.client(), "rg");
    server = await startGuardrailServer(store, 0, "127.0.0.1", { managementKey: MANAGEMENT_KEY });
    client = createClient(
      GuardrailService,
      createGrpcTransport({
        baseUrl: `http://127.0.0.1:${server.port}`,
        interceptors: [bearer(MANAGEMENT_KEY)],
      }),
    );
  });

  beforeEach(() => {
    store.competitorWrites = 0;
    store.attempts = 0;
  });

  after(async () => {
    await server?.close();
    await store?.close();
    await redis?.stop();
  });

  it("answers Aborted (HTTP 409, retry later) when a field the update was checked against keeps changing, and keeps the winner's write", async () => {
    store.field = "reset_interval";
    const { guardrail } = await client.createGuardrail({
      guardrail: { name: "raced", limitUsd: 5, resetInterval: ResetInterval.DAILY },
    });
    const err = await client
      .updateGuardrail({
        id: guardrail?.id ?? "",
        guardrail: { limitUsd: 7 },
        updateMask: { paths: ["limit_usd"] },
      })
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(err?.code).to.equal(Code.Aborted);
    expect(err?.rawMessage).to.match(/retry later/);
    expect(errorStatusOf(err as ConnectError).status).to.equal(409);
    const stored = await client.getGuardrail({ id: guardrail?.id ?? "" });
    expect(stored.guardrail?.limitUsd).to.equal(5);
    expect(stored.guardrail?.resetInterval).to.equal(
      store.competitorWrites % 2 ? ResetInterval.WEEKLY : ResetInterval.MONTHLY,
    );
    expect(store.competitorWrites).to.equal(8);
  });

  it("lands at the first attempt when the competing writes touch other fields", async () => {
    store.field = "description";
    const { guardrail } = await client.createGuardrail({
      guardrail: { name: "raced", limitUsd: 5, resetInterval: ResetInterval.DAILY },
    });
    const updated = await client.updateGuardrail({
      id: guardrail?.id ?? "",
      guardrail: { limitUsd: 7, name: "mine" },
      updateMask: { paths: ["limit_usd", "name"] },
    });
    expect(store.attempts).to.equal(1);
    expect(updated.guardrail?.name).to.equal("mine");
    expect(updated.guardrail?.limitUsd).to.equal(7);
    // The competitor's write stays: nothing was overwritten with what the service read.
    expect(updated.guardrail?.description).to.equal("competitor 1");
    expect(updated.guardrail?.version).to.equal(3n);
  });
});
