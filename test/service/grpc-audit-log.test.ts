import { createHash } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import { startGuardrailServer } from "../../apps/control-plane/server.js";
import { MemoryStore } from "../../store/memory-store.js";
import { postgresDatabase } from "../../store/request-log/postgres-database.js";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { metadata, type PlainClient, plainClient, statusOf, unary } from "../kit/grpc-plain.js";
import { errorInfoOf, refusal } from "../kit/grpc-status-details.js";
import { usePlainGuardrailServer } from "../kit/plain-guardrail-server.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

// biome-ignore lint/suspicious/noExplicitAny: plain gRPC messages
type Msg = any;

/**
 * A plain gRPC caller of AccountService gets the audit log an HTTP client gets: its writes
 * recorded with its key as the actor (from the call's authentication), its x-request-id when it
 * sends one, and the same refusals of bad filters.
 */
describe("gRPC: AccountService.ListAuditEvents", () => {
  let database: TestDatabase;
  let server: Awaited<ReturnType<typeof startGuardrailServer>>;
  let accounts: PlainClient;
  const store = new MemoryStore();
  const admin = (requestId?: string) => {
    const md = metadata({ key: MANAGEMENT_KEY });
    if (requestId) md.set("x-request-id", requestId);
    return md;
  };

  before(async function () {
    this.timeout(120_000);
    database = await createTestDatabase("postgres");
    server = await startGuardrailServer(store, 0, "127.0.0.1", {
      managementKey: MANAGEMENT_KEY,
      database: database.db,
    });
    accounts = plainClient("account", server.port);
  });

  after(async () => {
    accounts?.close();
    await server?.close();
    await database?.dispose();
    await store.close();
  });

  it("records a direct caller's writes, with its x-request-id only when it sent one", async () => {
    const plain = (await unary(accounts, "CreateWorkspace", { name: "Direct" }, admin())) as Msg;
    const tagged = (await unary(
      accounts,
      "CreateWorkspace",
      { name: "Tagged" },
      admin("grpc-req-1"),
    )) as Msg;
    const list = async (workspace_id: string) =>
      ((await unary(accounts, "ListAuditEvents", { workspace_id }, admin())) as Msg).events;
    const [untaggedEvent] = await list(plain.workspace.id);
    const [taggedEvent] = await list(tagged.workspace.id);
    expect(untaggedEvent).to.deep.include({ action: "workspace.create" });
    expect(untaggedEvent.actor.key_hash).to.equal(
      createHash("sha256").update(MANAGEMENT_KEY).digest("hex"),
    );
    // Optional fields: present only when set.
    expect(untaggedEvent._request_id).to.equal(undefined);
    expect(taggedEvent._request_id).to.equal("request_id");
    expect(taggedEvent.request_id).to.equal("grpc-req-1");
    // Only what a create set: no description (null before and after) is no change; the audio
    // cache switch and the replay data choice are always set (off and none unless asked), so the
    // record says how they started.
    expect(Object.keys(taggedEvent.changes.fields).sort()).to.deep.equal([
      "audio_cache",
      "name",
      "replay_data",
      "replay_data_days",
      "slug",
    ]);
  });

  it("refuses bad filters with INVALID_ARGUMENT naming them, as the HTTP API does", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ limit: 101 }, /limit must be an integer from 1 to 100/],
      [{ resource_type: "invoice" }, /resource_type must be one of/],
      [{ actor: "x" }, /actor must be a key hash/],
      [{ cursor: "!!" }, /cursor is not one this API returned/],
      [
        { from: { seconds: 2_000_000_000 }, to: { seconds: 1_000_000_000 } },
        /from must be before to/,
      ],
    ];
    for (const [req, message] of cases) {
      const status = await statusOf(unary(accounts, "ListAuditEvents", req, admin()));
      expect(status.code, JSON.stringify(req)).to.equal(grpc.status.INVALID_ARGUMENT);
      expect(status.details).to.match(message);
    }
  });

  it("is for management keys: a standard key is PERMISSION_DENIED", async () => {
    const created = (await unary(
      accounts,
      "CreateKey",
      { name: "std", kind: "KEY_KIND_STANDARD" },
      admin(),
    )) as Msg;
    const status = await statusOf(
      unary(accounts, "ListAuditEvents", {}, metadata({ key: created.secret })),
    );
    expect(status.code).to.equal(grpc.status.PERMISSION_DENIED);
  });
});

describe("gRPC: ListAuditEvents of a guardrail process without the database", () => {
  const h = usePlainGuardrailServer(async () => new MemoryStore());

  it("is UNAVAILABLE with reason STORE_UNAVAILABLE, and writes still succeed", async () => {
    await unary(
      h.accounts,
      "CreateWorkspace",
      { name: "Unlogged" },
      metadata({ key: MANAGEMENT_KEY }),
    );
    const err = await refusal(
      unary(h.accounts, "ListAuditEvents", {}, metadata({ key: MANAGEMENT_KEY })),
    );
    expect(err.code).to.equal(grpc.status.UNAVAILABLE);
    expect(errorInfoOf(err)?.reason).to.equal("ERROR_REASON_STORE_UNAVAILABLE");
    expect(err.details).to.match(/audit log is not available/);
  });
});

describe("gRPC: the audit log's database away", () => {
  // A PostgreSQL address where nothing listens (port 1): every query is refused at connect.
  const database = postgresDatabase({
    url: "postgres://postgres@127.0.0.1:1/railgate",
    connectTimeoutMs: 1_000,
  });
  const h = usePlainGuardrailServer(async () => new MemoryStore(), { database });
  after(async () => {
    await database.close();
  });

  it("management writes still succeed; reading the log is UNAVAILABLE (503) with Retry-After", async () => {
    const created = (await unary(
      h.accounts,
      "CreateWorkspace",
      { name: "Written anyway" },
      metadata({ key: MANAGEMENT_KEY }),
    )) as Msg;
    expect(created.workspace.name).to.equal("Written anyway");
    const err = await refusal(
      unary(h.accounts, "ListAuditEvents", {}, metadata({ key: MANAGEMENT_KEY })),
    );
    expect(err.code).to.equal(grpc.status.UNAVAILABLE);
    expect(errorInfoOf(err)).to.deep.equal({
      reason: "ERROR_REASON_STORE_UNAVAILABLE",
      retry_after_seconds: 2,
    });
    expect(err.details).to.match(/database is not answering/);
  });
});
