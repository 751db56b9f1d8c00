import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { RedisStore } from "../../store/redis-store.js";
import {
  metadata,
  type PlainClient,
  plainClient,
  serverStream,
  statusOf,
  unary,
} from "../kit/grpc-plain.js";
import { Api } from "../kit/http.js";
import { usePlainGuardrailServer } from "../kit/plain-guardrail-server.js";
import { pollUntil } from "../kit/poll.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

const INTERNAL_TOKEN = "internal-token-for-tests-0123456789abcdef";
const SPEAK = { model: "railgate/espeak-ng", voice: "alloy", text: "Hi." };

/**
 * The services trust no caller: every RPC authenticates from its metadata
 * with the same keys and rules as the HTTP API, messages carry no principal,
 * and only a caller holding the service credential may assert a region.
 * Driven with plain @grpc/grpc-js clients, as any process that reaches the
 * gRPC ports would.
 */
describe("gRPC services: caller authentication (plain @grpc/grpc-js)", function () {
  this.timeout(60_000);
  let redis: ThrowawayRedis;
  let system: RunningSystem;
  let guardrails: PlainClient;
  let accounts: PlainClient;
  let speech: PlainClient;
  let standard: { secret: string; hash: string };
  let europeOnly: { secret: string; hash: string };
  let europeGuardrailId: string;
  const admin = () => metadata({ key: MANAGEMENT_KEY });

  async function createKey(name: string, md = admin()) {
    const res = (await unary(accounts, "CreateKey", { name, kind: "KEY_KIND_STANDARD" }, md)) as {
      key: { hash: string };
      secret: string;
    };
    return { secret: res.secret, hash: res.key.hash };
  }

  before(async () => {
    redis = await startRedis();
    system = await startTestSystem(redis.url, {
      internalToken: INTERNAL_TOKEN,
      embeddedEngine: "auto",
      enginePoolSize: 1,
    });
    guardrails = plainClient("guardrail", system.guardrailGrpcPort);
    accounts = plainClient("account", system.guardrailGrpcPort);
    speech = plainClient("speech", system.speechGrpcPort);
    standard = await createKey("plain standard");
    europeOnly = await createKey("europe only");
    const g = (await unary(
      guardrails,
      "CreateGuardrail",
      { guardrail: { name: "EU ingress", allowed_data_regions: { values: ["REGION_EUROPE"] } } },
      admin(),
    )) as { guardrail: { id: string } };
    europeGuardrailId = g.guardrail.id;
    await unary(
      guardrails,
      "AssignKeys",
      { guardrail_id: g.guardrail.id, key_hashes: [europeOnly.hash] },
      admin(),
    );
  });

  after(async () => {
    for (const c of [guardrails, accounts, speech]) c?.close();
    await system?.close();
    await redis?.stop();
  });

  it("refuses every management RPC without a credential (UNAUTHENTICATED)", async () => {
    for (const [client, method, req] of [
      [accounts, "CreateKey", { name: "minted", kind: "KEY_KIND_MANAGEMENT" }],
      [accounts, "ListKeys", {}],
      [accounts, "ListWorkspaces", {}],
      [accounts, "AddCredits", { workspace_id: system.defaultWorkspaceId, amount_usd: 1000 }],
      [guardrails, "CreateGuardrail", { guardrail: { name: "x" } }],
      [guardrails, "ListGuardrails", {}],
      [guardrails, "ResolveEffectivePolicy", { key_hash: standard.hash }],
    ] as const) {
      const { code } = await statusOf(unary(client, method, req));
      expect(code, method).to.equal(grpc.status.UNAUTHENTICATED);
    }
  });

  it("refuses a wrong key and a standard key on management RPCs", async () => {
    const wrong = await statusOf(
      unary(
        accounts,
        "CreateKey",
        { name: "x", kind: "KEY_KIND_MANAGEMENT" },
        metadata({ key: "rg-mgmt-guess" }),
      ),
    );
    expect(wrong.code).to.equal(grpc.status.UNAUTHENTICATED);
    const asStandard = await statusOf(
      unary(
        accounts,
        "CreateKey",
        { name: "x", kind: "KEY_KIND_MANAGEMENT" },
        metadata({ key: standard.secret }),
      ),
    );
    expect(asStandard.code).to.equal(grpc.status.PERMISSION_DENIED);
    expect(asStandard.details).to.match(/management key/);
  });

  it("no longer offers EnsureManagementKey: a management key cannot be minted without one", async () => {
    const { code } = await statusOf(
      new Promise((resolve, reject) =>
        accounts.makeUnaryRequest(
          "/railgate.account.v1.AccountService/EnsureManagementKey",
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.from([0x0a, 0x20, ...Buffer.alloc(32, 0x61)]),
          (err, res) => (err ? reject(err) : resolve(res)),
        ),
      ),
    );
    expect(code).to.equal(grpc.status.UNIMPLEMENTED);
  });

  it("speaks only for the key in the metadata: a key hash in the message is ignored", async () => {
    // Field 1 of SynthesizeRequest used to be key_hash: an attacker who knows a public hash
    // (GET /keys lists them) sends it in the message, with no credential.
    const hash = Buffer.from(standard.hash);
    const forged = Buffer.concat([
      Buffer.from([0x0a, hash.length]),
      hash,
      Buffer.from([0x1a, SPEAK.model.length]),
      Buffer.from(SPEAK.model),
      Buffer.from([0x22, SPEAK.text.length]),
      Buffer.from(SPEAK.text),
    ]);
    const { code } = await statusOf(
      new Promise((resolve, reject) => {
        const call = speech.makeServerStreamRequest(
          "/railgate.speech.v1.SpeechService/Synthesize",
          (b: Buffer) => b,
          (b: Buffer) => b,
          forged,
        );
        call.on("data", () => {});
        call.on("error", reject);
        call.on("end", resolve);
      }),
    );
    expect(code).to.equal(grpc.status.UNAUTHENTICATED);
  });

  it("serves a standard key over plain gRPC and refuses a management key on speech", async () => {
    const messages = await serverStream(
      speech,
      "Synthesize",
      SPEAK,
      metadata({ key: standard.secret }),
    );
    expect(messages[0]?.start).to.be.an("object");
    expect(messages.length).to.be.above(1);
    const asAdmin = await statusOf(serverStream(speech, "Synthesize", SPEAK, admin()));
    expect(asAdmin.code).to.equal(grpc.status.PERMISSION_DENIED);
  });

  it("refuses a region assertion without the service credential", async () => {
    const { code, details } = await statusOf(
      serverStream(
        speech,
        "Synthesize",
        SPEAK,
        metadata({ key: europeOnly.secret, region: "europe" }),
      ),
    );
    expect(code).to.equal(grpc.status.PERMISSION_DENIED);
    expect(details).to.match(/railgate-ingress-region may only be asserted by a Railgate gateway/);
  });

  it("refuses a wrong service credential", async () => {
    const { code } = await statusOf(
      serverStream(
        speech,
        "Synthesize",
        SPEAK,
        metadata({ key: europeOnly.secret, region: "europe", internalToken: "not-the-token" }),
      ),
    );
    expect(code).to.equal(grpc.status.UNAUTHENTICATED);
  });

  it("takes a direct caller to be in its listener's region (global here): region rule 1 applies", async () => {
    const direct = await statusOf(
      serverStream(speech, "Synthesize", SPEAK, metadata({ key: europeOnly.secret })),
    );
    expect(direct.code).to.equal(grpc.status.PERMISSION_DENIED);
    expect(direct.details).to.match(/region "global" are not allowed by guardrail "EU ingress"/);
    // The refused speech request is in the request log, with the guardrail that decided.
    const log = new Api(`http://127.0.0.1:${system.gatewayPorts.global}`, MANAGEMENT_KEY);
    const listed = await pollUntil(
      () => log.get(`/api/v1/generations?key_hash=${europeOnly.hash}`),
      (r) => r.status === 200 && r.body.data.length === 1,
    );
    expect(listed.body.data[0]).to.include({
      status: "refused",
      refusal_reason: "region_not_allowed",
      guardrail_id: europeGuardrailId,
      model: SPEAK.model,
      data_region: "global",
    });
    // The same rule on every call made with the key, not only speech.
    for (const [client, method] of [
      [accounts, "Authenticate"],
      [speech, "GetGeneration"],
    ] as const) {
      const res = await statusOf(
        unary(client, method, { id: "gen-x" }, metadata({ key: europeOnly.secret })),
      );
      expect(res.code, method).to.equal(grpc.status.PERMISSION_DENIED);
    }
  });

  it("lets a caller with the service credential assert the region it admitted the client through", async () => {
    const md = metadata({
      key: europeOnly.secret,
      region: "europe",
      internalToken: INTERNAL_TOKEN,
    });
    const messages = await serverStream(speech, "Synthesize", SPEAK, md);
    expect(messages[0]?.start).to.be.an("object");
    const other = metadata({ key: europeOnly.secret, region: "us", internalToken: INTERNAL_TOKEN });
    expect((await statusOf(serverStream(speech, "Synthesize", SPEAK, other))).code).to.equal(
      grpc.status.PERMISSION_DENIED,
    );
  });

  it("the service credential alone is no key: it grants no management call", async () => {
    const { code } = await statusOf(
      unary(accounts, "ListKeys", {}, metadata({ internalToken: INTERNAL_TOKEN })),
    );
    expect(code).to.equal(grpc.status.UNAUTHENTICATED);
  });

  it("streams invalidations only to gateways and management keys", async () => {
    const watch = (md: grpc.Metadata) =>
      new Promise<string>((resolve, reject) => {
        const method = accounts.WatchInvalidations as unknown as (
          req: unknown,
          md: grpc.Metadata,
        ) => grpc.ClientReadableStream<{ scope: string }>;
        const call = method.call(accounts, {}, md);
        call.on("data", (m) => {
          resolve(m.scope);
          call.cancel();
        });
        call.on("error", reject);
      });
    expect((await statusOf(watch(metadata()))).code).to.equal(grpc.status.UNAUTHENTICATED);
    expect((await statusOf(watch(metadata({ key: standard.secret })))).code).to.equal(
      grpc.status.PERMISSION_DENIED,
    );
    expect(await watch(metadata({ internalToken: INTERNAL_TOKEN }))).to.equal("*");
    expect(await watch(admin())).to.equal("*");
  });

  it("sees a disabled key refused at once on the next call", async () => {
    const key = await createKey("soon disabled");
    await unary(accounts, "Authenticate", {}, metadata({ key: key.secret }));
    await unary(
      accounts,
      "UpdateKey",
      { hash: key.hash, disabled: true, update_mask: { paths: ["disabled"] } },
      admin(),
    );
    // Invalidation travels over Redis pub/sub; it lands within milliseconds.
    let code = grpc.status.OK;
    for (let i = 0; i < 50 && code === grpc.status.OK; i++) {
      code = (await statusOf(unary(accounts, "Authenticate", {}, metadata({ key: key.secret }))))
        .code;
      if (code === grpc.status.OK) await new Promise((r) => setTimeout(r, 20));
    }
    expect(code).to.equal(grpc.status.UNAUTHENTICATED);
  });

  it("lists models without any credential", async () => {
    const res = await unary(speech, "ListModels", {});
    expect((res.models as unknown[]).length).to.be.above(0);
  });
});

describe("gRPC services: a listener told its region (RAILGATE_GRPC_REGION)", () => {
  let redis: ThrowawayRedis;
  const h = usePlainGuardrailServer(
    async () => {
      redis = await startRedis();
      return new RedisStore(redis.client(), "rg");
    },
    { listenerRegion: "europe" },
  );
  // After the server's own after-hook (mocha runs them in order): the store has closed.
  after(async () => {
    await redis?.stop();
  });

  it("admits a europe-only key that calls it directly, and no longer once its guardrail says us", async () => {
    const admin = metadata({ key: MANAGEMENT_KEY });
    const created = (await unary(
      h.accounts,
      "CreateKey",
      { name: "eu", kind: "KEY_KIND_STANDARD" },
      admin,
    )) as {
      key: { hash: string };
      secret: string;
    };
    const g = (await unary(
      h.guardrails,
      "CreateGuardrail",
      { guardrail: { name: "EU", allowed_data_regions: { values: ["REGION_EUROPE"] } } },
      admin,
    )) as { guardrail: { id: string } };
    await unary(
      h.guardrails,
      "AssignKeys",
      { guardrail_id: g.guardrail.id, key_hashes: [created.key.hash] },
      admin,
    );
    const me = await unary(h.accounts, "Authenticate", {}, metadata({ key: created.secret }));
    expect((me.key as { hash: string }).hash).to.equal(created.key.hash);

    await unary(
      h.guardrails,
      "UpdateGuardrail",
      {
        id: g.guardrail.id,
        guardrail: { allowed_data_regions: { values: ["REGION_US"] } },
        update_mask: { paths: ["allowed_data_regions"] },
      },
      admin,
    );
    let code = grpc.status.OK;
    for (let i = 0; i < 50 && code === grpc.status.OK; i++) {
      code = (
        await statusOf(unary(h.accounts, "Authenticate", {}, metadata({ key: created.secret })))
      ).code;
      if (code === grpc.status.OK) await new Promise((r) => setTimeout(r, 20));
    }
    expect(code).to.equal(grpc.status.PERMISSION_DENIED);
  });
});
