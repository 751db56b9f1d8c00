import {
  type GuardrailServerOptions,
  startGuardrailServer,
} from "../../apps/control-plane/server.js";
import { MemoryStore } from "../../store/memory-store.js";
import { RedisStore } from "../../store/redis-store.js";
import type { Store } from "../../store/types.js";
import { type PlainClient, plainClient } from "./grpc-plain.js";
import { startRedis, type ThrowawayRedis } from "./redis-server.js";
import { MANAGEMENT_KEY } from "./system.js";

/** What a suite reaches once its before-hook ran: the store and two plain clients. */
export interface PlainGuardrailServer {
  store: Store;
  guardrails: PlainClient;
  accounts: PlainClient;
}

/**
 * The guardrail process's gRPC server (GuardrailService + AccountService) on a
 * free loopback port over `openStore()`, with the test management key, reached
 * by plain @grpc/grpc-js clients: started before the suite, closed after it.
 * The fields are filled in by the before-hook, so read them inside tests.
 */
export function usePlainGuardrailServer(
  openStore: () => Promise<Store>,
  options: GuardrailServerOptions = {},
): PlainGuardrailServer {
  const h = {} as PlainGuardrailServer;
  let server: Awaited<ReturnType<typeof startGuardrailServer>> | undefined;
  before(async () => {
    h.store = await openStore();
    server = await startGuardrailServer(h.store, 0, "127.0.0.1", {
      managementKey: MANAGEMENT_KEY,
      ...options,
    });
    h.guardrails = plainClient("guardrail", server.port);
    h.accounts = plainClient("account", server.port);
  });
  after(async () => {
    h.guardrails?.close();
    h.accounts?.close();
    await server?.close();
    await h.store?.close();
  });
  return h;
}

/**
 * Declares `suite` twice under `title`: on a throwaway Redis and on the
 * embedded store, so the two stores answer the same calls the same way.
 */
export function onBothStores(
  title: string,
  suite: (name: string, openStore: () => Promise<Store>) => void,
): void {
  describe(title, () => {
    let redis: ThrowawayRedis;
    before(async () => {
      redis = await startRedis();
    });
    after(async () => {
      await redis?.stop();
    });
    suite("redis", async () => new RedisStore(redis.client(), "rg"));
    suite("memory", async () => new MemoryStore());
  });
}
