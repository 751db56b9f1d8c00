import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { type GuardrailServer, startGuardrailServer } from "../../apps/control-plane/server.js";
import { loadGrpcTls } from "../../platform/rpc/grpc-tls.js";
import { RedisStore } from "../../store/redis-store.js";
import { metadata, type PlainClient, plainClientWith, statusOf, unary } from "../kit/grpc-plain.js";
import { Api } from "../kit/http.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";
import { makeTestPki, type TestPki } from "../kit/tls-certs.js";

/**
 * mTLS as the service credential: the services serve TLS, and a client
 * certificate from the gateways' CA proves a Railgate gateway (it may assert
 * the ingress region) as the shared token does. A TLS client without one, or
 * with a certificate from another CA, is only as good as its bearer key.
 */
describe("gRPC services over mTLS", function () {
  this.timeout(60_000);
  let pki: TestPki;
  let redis: ThrowawayRedis;
  let store: RedisStore;
  let server: GuardrailServer;
  let europeOnly: string;
  const clients: PlainClient[] = [];

  function accountsAs(cert?: "gateway" | "rogue"): PlainClient {
    const ca = pki.read(pki.caFile);
    const creds = !cert
      ? grpc.credentials.createSsl(ca)
      : grpc.credentials.createSsl(
          ca,
          pki.read(cert === "gateway" ? pki.gatewayKeyFile : pki.rogueKeyFile),
          pki.read(cert === "gateway" ? pki.gatewayCertFile : pki.rogueCertFile),
        );
    const client = plainClientWith("account", server.port, creds);
    clients.push(client);
    return client;
  }

  before(async () => {
    pki = makeTestPki();
    redis = await startRedis();
    store = new RedisStore(redis.client(), "rg");
    server = await startGuardrailServer(store, 0, "127.0.0.1", {
      managementKey: MANAGEMENT_KEY,
      tls: loadGrpcTls({
        certFile: pki.serverCertFile,
        keyFile: pki.serverKeyFile,
        caFile: pki.caFile,
      }),
    });
    const admin = metadata({ key: MANAGEMENT_KEY });
    const accounts = accountsAs();
    const guardrails = plainClientWith(
      "guardrail",
      server.port,
      grpc.credentials.createSsl(pki.read(pki.caFile)),
    );
    clients.push(guardrails);
    const key = (await unary(
      accounts,
      "CreateKey",
      { name: "eu", kind: "KEY_KIND_STANDARD" },
      admin,
    )) as {
      key: { hash: string };
      secret: string;
    };
    europeOnly = key.secret;
    const g = (await unary(
      guardrails,
      "CreateGuardrail",
      { guardrail: { name: "EU", allowed_data_regions: { values: ["REGION_EUROPE"] } } },
      admin,
    )) as { guardrail: { id: string } };
    await unary(
      guardrails,
      "AssignKeys",
      { guardrail_id: g.guardrail.id, key_hashes: [key.key.hash] },
      admin,
    );
  });

  after(async () => {
    for (const c of clients) c.close();
    await server?.close();
    await store?.close();
    await redis?.stop();
  });

  it("lets a client certificate from the gateways' CA assert the ingress region", async () => {
    const me = await unary(
      accountsAs("gateway"),
      "Authenticate",
      {},
      metadata({ key: europeOnly, region: "europe" }),
    );
    expect(me.key).to.be.an("object");
  });

  it("refuses the assertion from a TLS client without a certificate", async () => {
    const res = await statusOf(
      unary(accountsAs(), "Authenticate", {}, metadata({ key: europeOnly, region: "europe" })),
    );
    expect(res.code).to.equal(grpc.status.PERMISSION_DENIED);
    expect(res.details).to.match(/may only be asserted by a Railgate gateway/);
  });

  it("refuses the assertion from a certificate of another CA", async () => {
    const res = await statusOf(
      unary(
        accountsAs("rogue"),
        "Authenticate",
        {},
        metadata({ key: europeOnly, region: "europe" }),
      ),
    );
    expect(res.code).to.equal(grpc.status.PERMISSION_DENIED);
  });

  it("still serves a bearer key without a client certificate, in the listener's region", async () => {
    const admin = await unary(accountsAs(), "Authenticate", {}, metadata({ key: MANAGEMENT_KEY }));
    expect(admin.key).to.be.an("object");
    const eu = await statusOf(
      unary(accountsAs(), "Authenticate", {}, metadata({ key: europeOnly })),
    );
    expect(eu.code).to.equal(grpc.status.PERMISSION_DENIED);
  });

  it("refuses a cleartext client", async () => {
    const plain = plainClientWith("account", server.port, grpc.credentials.createInsecure());
    clients.push(plain);
    const res = await statusOf(unary(plain, "Authenticate", {}, metadata({ key: MANAGEMENT_KEY })));
    expect(res.code).to.equal(grpc.status.UNAVAILABLE);
  });
});

describe("the whole system with mTLS on the internal hop", function () {
  this.timeout(60_000);
  let redis: ThrowawayRedis;
  let system: RunningSystem;

  before(async () => {
    const pki = makeTestPki();
    redis = await startRedis();
    system = await startTestSystem(redis.url, {
      grpcTls: { certFile: pki.serverCertFile, keyFile: pki.serverKeyFile, caFile: pki.caFile },
    });
  });

  after(async () => {
    await system?.close();
    await redis?.stop();
  });

  it("serves the HTTP API through TLS-protected services", async () => {
    const api = new Api(`http://127.0.0.1:${system.gatewayPorts.europe}`, MANAGEMENT_KEY);
    const created = await api.post("/api/v1/guardrails", { name: "over mTLS" });
    expect(created.status).to.equal(201);
    const me = await api.get("/api/v1/key");
    expect(me.status).to.equal(200);
    expect(me.body.data.kind).to.equal("management");
  });
});
