import { randomBytes } from "node:crypto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import { GUARDRAIL_SOURCES } from "../../domain/enums.js";
import {
  FilterAction,
  type Guardrail,
  GuardrailSchema,
  Region,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  AudioFormat,
  type Generation,
  GenerationSchema,
  GenerationStatus,
} from "../../gen/railgate/speech/v1/speech_pb.js";
import { sealInput } from "../../governance/replay-data/sealed-input.js";
import { type ContentWindow, replayContent } from "../../services/guardrail/content-replay.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { GenerationRecords, type RecordReplayData } from "../../store/request-log/generations.js";
import { expireReplayInputs } from "../../store/request-log/replay-inputs.js";
import { onBothDatabases } from "../kit/databases.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ACCOUNT = { allowSafetyRetentionGoogle: true, allowSafetyRetentionOther: true };
const KEY = randomBytes(32);
const KEY_HASH = "a".repeat(64);

function guardrail(id: string, fields: MessageInitShape<typeof GuardrailSchema> = {}): Guardrail {
  return create(GuardrailSchema, { id, workspaceId: `ws-${id}`, name: id, ...fields });
}

function record(
  id: string,
  g: Guardrail,
  atMs: number,
  fields: MessageInitShape<typeof GenerationSchema> = {},
) {
  return create(GenerationSchema, {
    id,
    model: "acme/voice",
    provider: "acme",
    characters: 20,
    costUsd: 0.0002,
    format: AudioFormat.MP3,
    keyHash: KEY_HASH,
    workspaceId: g.workspaceId,
    status: GenerationStatus.COMPLETED,
    dataRegion: Region.GLOBAL,
    governedBy: [`key:${g.id}`],
    createdAt: timestampFromMs(atMs),
    ...fields,
  });
}

function windowOf(g: Guardrail, nowMs: number): ContentWindow {
  return {
    workspaceId: g.workspaceId,
    guardrailId: g.id,
    labels: GUARDRAIL_SOURCES.names.map((s) => `${s}:${g.id}`),
    fromMs: nowMs - 2 * DAY,
    toMs: nowMs + HOUR,
    nowMs,
  };
}

async function insert(
  db: SqlDatabase,
  rows: [Generation, RecordReplayData | undefined][],
): Promise<void> {
  const data = new Map(rows);
  await new GenerationRecords(db).insert(
    rows.map(([g]) => g),
    (g) => data.get(g),
  );
}

onBothDatabases("request log: what a record keeps for a content-filter replay", (db) => {
  const now = Date.now();

  it("decides a builtin redact filter from the records' detections: the newly redacted count", async () => {
    const g = guardrail("detections");
    await insert(db(), [
      [record("gen-d1", g, now - HOUR), { detections: { email: 1 } }],
      [record("gen-d2", g, now - HOUR), { detections: {} }],
      [record("gen-d3", g, now - HOUR), { detections: { email: 2, phone: 1 } }],
      [record("gen-d4", g, now - HOUR), { detections: { phone: 1 } }],
      [record("gen-d5", g, now - HOUR), undefined],
    ]);
    const proposed = guardrail("detections", {
      contentFilterBuiltins: { values: [{ slug: "email", action: FilterAction.REDACT }] },
    });
    const r = await replayContent(
      { database: db(), account: ACCOUNT },
      g,
      proposed,
      windowOf(g, now),
      20,
    );
    expect(r.newlyRedacted).to.equal(2);
    expect(r.newlyRefused + r.newlyAllowed + r.changed + r.newlyFlagged).to.equal(0);
    expect(r.fields).to.have.length(1);
    expect(r.fields[0]).to.deep.include({
      field: "content_filter_builtins",
      fromDetections: 4n,
      fromEncryptedInput: 0n,
      notReplayed: 1n,
    });
    expect(r.notReplayed).to.deep.equal([
      {
        field: "content_filter_builtins",
        reason:
          "1 of 5 requests had no replay data (their workspace's replay_data was none, or their input had expired)",
      },
    ]);
    // A block of phone numbers refuses the two that had one; a flag of email counts none twice.
    const blocking = guardrail("detections", {
      contentFilterBuiltins: {
        values: [
          { slug: "phone", action: FilterAction.BLOCK },
          { slug: "email", action: FilterAction.FLAG },
        ],
      },
    });
    const b = await replayContent(
      { database: db(), account: ACCOUNT },
      g,
      blocking,
      windowOf(g, now),
      20,
    );
    expect(b.newlyRefused).to.equal(2);
    expect(b.changed).to.equal(2);
    expect(b.newlyFlagged).to.equal(1);
    expect([...b.sample].sort()).to.deep.equal(["gen-d3", "gen-d4"]);
  });

  it("decides a new custom block pattern exactly from the encrypted inputs: the ids it newly refuses", async () => {
    const g = guardrail("sealed", {
      contentFilters: { values: [{ pattern: "launch code", action: FilterAction.BLOCK }] },
    });
    const sealed = (id: string, text: string, key = KEY): RecordReplayData => ({
      input: { sealed: sealInput(key, id, [{ text, role: "user" }]), untilMs: now + 2 * DAY },
    });
    const refused = {
      status: GenerationStatus.REFUSED,
      refusalReason: "content_blocked",
      guardrailId: g.id,
    };
    await insert(db(), [
      [record("gen-s1", g, now - 2 * HOUR), sealed("gen-s1", "the password is swordfish")],
      [record("gen-s2", g, now - 2 * HOUR), sealed("gen-s2", "hello there")],
      [record("gen-s3", g, now - HOUR, refused), sealed("gen-s3", "the launch code is 0000")],
      [record("gen-s4", g, now - HOUR), sealed("gen-s4", "swordfish", randomBytes(32))],
      // Sealed for another record: it does not open here.
      [record("gen-s5", g, now - HOUR), sealed("gen-s1", "swordfish")],
    ]);
    const proposed = guardrail("sealed", {
      contentFilters: { values: [{ pattern: "sword\\w+", action: FilterAction.BLOCK }] },
    });
    const r = await replayContent(
      { database: db(), account: ACCOUNT, replayDataKey: KEY },
      g,
      proposed,
      windowOf(g, now),
      20,
    );
    expect(r.newlyRefused).to.equal(1);
    // The launch code is no longer blocked.
    expect(r.newlyAllowed).to.equal(1);
    expect(r.changed).to.equal(2);
    expect(r.sample).to.deep.equal(["gen-s1", "gen-s3"]);
    expect(r.fields).to.deep.equal([
      {
        field: "content_filters",
        fromDetections: 0n,
        fromEncryptedInput: 3n,
        notReplayed: 2n,
        reason:
          "2 of 5 requests kept an input this deployment's RAILGATE_REPLAY_DATA_KEY does not open",
      },
    ]);
    // Without the key, nothing opens.
    const keyless = await replayContent(
      { database: db(), account: ACCOUNT },
      g,
      proposed,
      windowOf(g, now),
      20,
    );
    expect(keyless.changed).to.equal(0);
    expect(keyless.fields[0]?.notReplayed).to.equal(5n);
  });

  it("clears an input once its days have passed, and the replay then has none", async () => {
    const g = guardrail("expiry");
    const text = "write to me at someone@example.com";
    await insert(db(), [
      [
        record("gen-e1", g, now - HOUR),
        { input: { sealed: sealInput(KEY, "gen-e1", [{ text, role: "user" }]), untilMs: now } },
      ],
      [
        record("gen-e2", g, now - HOUR),
        {
          input: { sealed: sealInput(KEY, "gen-e2", [{ text, role: "user" }]), untilMs: now + DAY },
        },
      ],
    ]);
    const proposed = guardrail("expiry", {
      contentFilterBuiltins: { values: [{ slug: "email", action: FilterAction.REDACT }] },
    });
    const deps = { database: db(), account: ACCOUNT, replayDataKey: KEY };
    // Past its time, an input is not read even before the maintenance clears it.
    const read = await replayContent(deps, g, proposed, windowOf(g, now + 1), 20);
    expect(read.newlyRedacted).to.equal(1);
    expect(await expireReplayInputs(db(), now + 1)).to.equal(1);
    const left = await db().query<{ id: string; kept: boolean; until: Date | null }>(
      "SELECT id, replay_input IS NOT NULL AS kept, replay_input_until AS until FROM generations WHERE id IN ('gen-e1', 'gen-e2') ORDER BY id",
    );
    expect(left.map((r) => [r.id, r.kept, r.until === null])).to.deep.equal([
      ["gen-e1", false, true],
      ["gen-e2", true, false],
    ]);
    // The second one's time comes too.
    expect(await expireReplayInputs(db(), now + DAY)).to.equal(1);
    const after = await replayContent(deps, g, proposed, windowOf(g, now + DAY), 20);
    expect(after.newlyRedacted).to.equal(0);
    expect(after.fields[0]?.notReplayed).to.equal(2n);
    // The records themselves stay.
    expect(await new GenerationRecords(db()).get("gen-e1", {})).to.not.equal(undefined);
  });
});
