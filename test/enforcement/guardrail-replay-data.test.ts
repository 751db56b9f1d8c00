import { fromBinary } from "@bufbuild/protobuf";
import { expect } from "chai";
import { ReplayData, WorkspaceSchema } from "../../gen/railgate/account/v1/account_pb.js";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio, Gateway, type Key } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError, shown } from "../kit/expect.js";
import { Api, type JsonResponse } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";

const EMAIL = "Write to support@example.com today";
const PLAIN = "Nothing to see here at all";
const SECRET = "the password is swordfish";

describe("enforcement: what workspaces keep for what-if replays of content filters (replay_data)", () => {
  const w = useWorld();
  const speak = (key: Key, input: string) => w.gw.speak(key, { model: MODELS.fast, input });
  const simulated = async (id: string, body: unknown, count: number) => {
    const res = await pollUntil(
      (): Promise<JsonResponse> => w.gw.admin.post(`/api/v1/guardrails/${id}/simulate`, body),
      (r) => r.status !== 200 || r.body.data.requests_replayed >= count,
    );
    expect(res.status, shown(res)).to.equal(200);
    expect(res.body.data.requests_replayed).to.equal(count);
    return res.body.data;
  };
  /** The record's replay columns, once the request log holds it. */
  const stored = async (id: string) => {
    const rows = await pollUntil(
      () =>
        w.system.database.query<{ detections: unknown; input: boolean; until: Date | null }>(
          "SELECT replay_detections AS detections, replay_input IS NOT NULL AS input, replay_input_until AS until FROM generations WHERE id = $1",
          [id],
        ),
      (r) => r.length === 1,
    );
    return rows[0] as { detections: unknown; input: boolean; until: Date | null };
  };
  const workspaceWith = async (body: Record<string, unknown>) => {
    const ws = await w.gw.workspace();
    const res = await w.gw.admin.patch(`/api/v1/workspaces/${ws.id}`, body);
    expect(res.status, shown(res)).to.equal(200);
    return ws;
  };
  const idOf = (r: { headers: Headers }) => r.headers.get("x-generation-id") ?? "";

  it("refuses a bad replay_data or replay_data_days with a 400 naming it; a good one is kept and audited", async () => {
    const ws = await w.gw.workspace();
    const patch = (body: unknown) => w.gw.admin.patch(`/api/v1/workspaces/${ws.id}`, body);
    expectError(
      await patch({ replay_data: "everything" }),
      400,
      /replay_data must be "none", "detections", "encrypted_input"/,
    );
    expectError(await patch({ replay_data: null }), 400, /replay_data/);
    expectError(await patch({ replay_data: true }), 400, /replay_data/);
    for (const days of [0, 31, 2.5]) {
      expectError(
        await patch({ replay_data_days: days }),
        400,
        /^replay_data_days must be an integer/,
      );
    }
    expectError(
      await w.gw.admin.post("/api/v1/workspaces", { name: "bad replay", replay_data_days: 40 }),
      400,
      /replay_data_days/,
    );
    const fresh = await w.gw.admin.get(`/api/v1/workspaces/${ws.id}`);
    expect(fresh.body.data).to.include({ replay_data: "none", replay_data_days: 7 });
    const ok = await patch({ replay_data: "encrypted_input", replay_data_days: 3 });
    expect(ok.status, shown(ok)).to.equal(200);
    expect(ok.body.data).to.include({ replay_data: "encrypted_input", replay_data_days: 3 });
    const read = await w.gw.admin.get(`/api/v1/workspaces/${ws.id}`);
    expect(read.body.data).to.include({ replay_data: "encrypted_input", replay_data_days: 3 });
    // Durable: the configuration's copy in the database (store/config-outbox) has it too.
    const durable = await pollUntil(
      () =>
        w.system.database.query<{ data: Uint8Array }>(
          "SELECT data FROM config_workspaces WHERE id = $1",
          [ws.id],
        ),
      (rows) =>
        rows[0] !== undefined &&
        fromBinary(WorkspaceSchema, rows[0].data).replayData === ReplayData.ENCRYPTED_INPUT,
    );
    const copy = fromBinary(WorkspaceSchema, (durable[0] as { data: Uint8Array }).data);
    expect([copy.replayData, copy.replayDataDays]).to.deep.equal([ReplayData.ENCRYPTED_INPUT, 3]);
    const audit = await w.gw.admin.get(
      `/api/v1/audit-log?resource_type=workspace&resource_id=${ws.id}&action=workspace.update`,
    );
    expect(audit.status, shown(audit)).to.equal(200);
    expect(audit.body.data[0].changes).to.deep.include({
      replay_data: { before: "none", after: "encrypted_input" },
      replay_data_days: { before: 7, after: 3 },
    });
  });

  it("refuses encrypted_input where no key is configured, and days past the request log's retention", async () => {
    const system = await w.startSystem(undefined, {
      RAILGATE_REPLAY_DATA_KEY: "",
      RAILGATE_REQUEST_LOG_RETENTION_DAYS: "3",
    });
    try {
      const gw = new Gateway(system);
      const ws = await gw.workspace();
      const patch = (body: unknown) => gw.admin.patch(`/api/v1/workspaces/${ws.id}`, body);
      expectError(
        await patch({ replay_data: "encrypted_input", replay_data_days: 5 }),
        400,
        /^replay_data_days must be at most the request log's retention of 3 days \(got 5\)/,
      );
      expectError(
        await patch({ replay_data: "encrypted_input", replay_data_days: 2 }),
        400,
        /^replay_data "encrypted_input" needs RAILGATE_REPLAY_DATA_KEY/,
      );
      const detections = await patch({ replay_data: "detections" });
      expect(detections.status, shown(detections)).to.equal(200);
    } finally {
      await system.close();
    }
  });

  it("detections: a simulate turning on a builtin redact filter reports the newly redacted requests", async () => {
    const ws = await workspaceWith({ replay_data: "detections" });
    const key = await w.gw.key(ws);
    const g = await w.gw.guardrail(ws, { name: "No filters yet" });
    await w.gw.assignKeys(g, key);
    const first = await speak(key, EMAIL);
    expectAudio(first);
    expectAudio(await speak(key, PLAIN));
    expect(await stored(idOf(first))).to.include({ input: false });
    expect((await stored(idOf(first))).detections).to.deep.equal({ email: 1 });
    const data = await simulated(
      g,
      { change: { content_filter_builtins: [{ slug: "email", action: "redact" }] } },
      2,
    );
    expect(data.newly_redacted).to.equal(1);
    expect(data.outcomes_changed).to.equal(0);
    expect(data.content_replay).to.deep.equal([
      {
        field: "content_filter_builtins",
        from_detections: 2,
        from_encrypted_input: 0,
        not_replayed: 0,
        reason: null,
      },
    ]);
    expect(data.not_replayed).to.deep.equal([]);
    // A custom pattern is not in the detections: reported as not replayed, with why.
    const custom = await simulated(
      g,
      { change: { content_filters: [{ pattern: "support", action: "block" }] } },
      2,
    );
    expect(custom.newly_refused).to.deep.equal([]);
    expect(custom.not_replayed).to.deep.equal([
      {
        field: "content_filters",
        reason:
          "2 of 2 requests kept only detections, which decide builtin filters, not custom patterns",
      },
    ]);
  });

  it("encrypted_input: a simulate with a new custom block pattern reports the ids it newly refuses; no API returns the input", async () => {
    const ws = await workspaceWith({ replay_data: "encrypted_input", replay_data_days: 2 });
    const key = await w.gw.key(ws);
    const g = await w.gw.guardrail(ws, { name: "Custom patterns" });
    await w.gw.assignKeys(g, key);
    const secret = await speak(key, SECRET);
    expectAudio(secret);
    expectAudio(await speak(key, PLAIN));
    const row = await stored(idOf(secret));
    expect(row.input).to.equal(true);
    expect(row.detections).to.equal(null);
    // Kept replay_data_days from the request.
    const days = ((row.until as Date).getTime() - Date.now()) / 86_400_000;
    expect(days).to.be.within(1.99, 2.01);
    const data = await simulated(
      g,
      { change: { content_filters: [{ pattern: "sword\\w+", action: "block" }] } },
      2,
    );
    expect(data.newly_refused).to.deep.equal([{ reason: "content", count: 1 }]);
    expect(data.outcomes_changed).to.equal(1);
    expect(data.affected_generation_ids).to.deep.equal([idOf(secret)]);
    expect(data.content_replay).to.deep.equal([
      {
        field: "content_filters",
        from_detections: 0,
        from_encrypted_input: 2,
        not_replayed: 0,
        reason: null,
      },
    ]);
    // Neither the record nor the log's listing carries the text, for the key or the operator.
    const own = new Api(w.gw.url(), key.secret);
    for (const api of [own, w.gw.admin]) {
      const one = await api.get(`/api/v1/generation?id=${idOf(secret)}`);
      expect(one.status, shown(one)).to.equal(200);
      const list = await api.get(`/api/v1/generations?workspace_id=${ws.id}&limit=10`);
      expect(list.status, shown(list)).to.equal(200);
      expect(list.body.data.map((r: { id: string }) => r.id)).to.include(idOf(secret));
      for (const body of [one.body, list.body]) {
        const text = JSON.stringify(body);
        expect(text).to.not.include("swordfish");
        expect(text).to.not.match(/replay_(input|detections)/);
      }
    }
  });

  it("encrypted_input keeps no input of a request whose guardrails enforce zero data retention", async () => {
    const ws = await workspaceWith({ replay_data: "encrypted_input" });
    const key = await w.gw.key(ws);
    const g = await w.gw.guardrail(ws, { enforce_zdr: true });
    await w.gw.assignKeys(g, key);
    const res = await speak(key, EMAIL);
    expectAudio(res);
    const row = await stored(idOf(res));
    expect(row.input).to.equal(false);
    expect(row.until).to.equal(null);
    // Detections only, which hold no text.
    expect(row.detections).to.deep.equal({ email: 1 });
  });

  it("keeps nothing for a workspace whose replay_data is none", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const res = await speak(key, EMAIL);
    expectAudio(res);
    expect(await stored(idOf(res))).to.deep.equal({ detections: null, input: false, until: null });
  });
});
