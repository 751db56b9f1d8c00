import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import type { Guardrail } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { httpStatusOf } from "../../services/common/errors.js";
import { RedisStore } from "../../services/common/store/redis-store.js";
import { startGuardrailServer } from "../../services/guardrail/server.js";
import { startRedis, type ThrowawayRedis } from "../support/redis-server.js";
import { MANAGEMENT_KEY } from "../support/system.js";

/**
 * A store on a real Redis where another writer always gets in first: each
 * time the service is about to write, a competing update lands, so every
 * compare-and-set loses. The service must give up with 409, never write a
 * stale record, never lose the competitor's write.
 */
class AlwaysRacedStore extends RedisStore {
  competitorWrites = 0;

  override async putGuardrail(g: Guardrail, expectedVersion: number) {
    if (expectedVersion > 0) {
      const current = await this.getGuardrail(g.workspaceId, g.id);
      if (current) {
        current.value.description = `competitor ${++this.competitorWrites}`;
        await super.putGuardrail(current.value, current.version);
      }
    }
    return super.putGuardrail(g, expectedVersion);
  }
}

describe("GuardrailService: update conflicts", () => {
  let redis: ThrowawayRedis;
  let store: AlwaysRacedStore;
  let server: Awaited<ReturnType<typeof startGuardrailServer>>;

  before(async () => {
    redis = await startRedis();
    store = new AlwaysRacedStore(redis.client(), "rg");
    server = await startGuardrailServer(store, 0, "127.0.0.1", { managementKey: MANAGEMENT_KEY });
  });

  after(async () => {
    await server?.close();
    await store?.close();
    await redis?.stop();
  });

  it("answers Aborted (HTTP 409, retry later) when every attempt loses the race, and keeps the winner's write", async () => {
    const client = createClient(
      GuardrailService,
      createGrpcTransport({
        baseUrl: `http://127.0.0.1:${server.port}`,
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${MANAGEMENT_KEY}`);
            return next(req);
          },
        ],
      }),
    );
    const { guardrail } = await client.createGuardrail({ guardrail: { name: "raced" } });
    const err = await client
      .updateGuardrail({
        id: guardrail?.id ?? "",
        guardrail: { name: "mine" },
        updateMask: { paths: ["name"] },
      })
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(err?.code).to.equal(Code.Aborted);
    expect(err?.rawMessage).to.match(/retry later/);
    expect(httpStatusOf(err as ConnectError)).to.equal(409);
    const stored = await client.getGuardrail({ id: guardrail?.id ?? "" });
    expect(stored.guardrail?.name).to.equal("raced");
    expect(stored.guardrail?.description).to.equal(`competitor ${store.competitorWrites}`);
    expect(store.competitorWrites).to.equal(8);
  });
});
