import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import { ModelCatalog } from "../../domain/catalog/model-catalog.js";
import {
  type Guardrail,
  GuardrailSchema,
  Region,
  ResetInterval,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  ReplayRefusal,
  type SimulateGuardrailResponse,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import {
  AudioFormat,
  DataPolicySchema,
  type Generation,
  GenerationSchema,
  GenerationStatus,
} from "../../gen/railgate/speech/v1/speech_pb.js";
import { GuardrailReplay, type RecordedRequest } from "../../governance/guardrail-replay.js";
import type { GuardrailSource } from "../../governance/policy/types.js";
import { simulate } from "../../services/guardrail/simulate.js";
import { defaultCatalog } from "../../services/speech/catalog/load-catalog.js";
import { GenerationRecords } from "../../store/request-log/generations.js";
import { onBothDatabases } from "../kit/databases.js";

const DAY = 86_400_000;
const ACCOUNT = { allowSafetyRetentionGoogle: true, allowSafetyRetentionOther: true };

/** A small deterministic generator, so a failure replays the same records. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s / 2_147_483_648;
  };
}

/** The replay of every record in turn, in this process: what the database's must agree with. */
function oneByOne(
  catalog: ModelCatalog,
  recorded: readonly RecordedRequest[],
  proposed: Guardrail,
) {
  const replay = new GuardrailReplay(proposed, catalog, ACCOUNT);
  let changed = 0;
  let refused = 0;
  const spend = new Map<string, [number, number]>();
  const changedIds = new Set<string>();
  for (const r of recorded) {
    const out = replay.next(r);
    for (const e of [`key:${r.keyHash}`, ...(r.memberUserId ? [`member:${r.memberUserId}`] : [])]) {
      const s = spend.get(e) ?? [0, 0];
      s[0] += out.recordedUsd;
      s[1] += out.replayedUsd;
      spend.set(e, s);
    }
    if (out.before.allowed === out.after.allowed) continue;
    changed++;
    changedIds.add(r.id);
    if (!out.after.allowed) refused++;
  }
  return { changed, refused, spend, changedIds };
}

/** The database's replay against the one in this process: counts, sample and spend agree. */
function expectAgreement(
  res: SimulateGuardrailResponse,
  want: ReturnType<typeof oneByOne>,
  recordCount: number,
): void {
  expect(Number(res.requestsReplayed)).to.equal(recordCount);
  expect(Number(res.outcomesChanged)).to.equal(want.changed);
  const budget = res.newlyRefused.find((n) => n.reason === ReplayRefusal.BUDGET);
  expect(Number(budget?.count ?? 0)).to.equal(want.refused);
  expect(Number(res.newlyAllowed)).to.equal(want.changed - want.refused);
  for (const id of res.affectedGenerationIds) expect(want.changedIds.has(id)).to.equal(true);
  for (const s of res.spend) {
    const [recordedUsd, replayedUsd] = want.spend.get(`${s.entity}:${s.subject}`) ?? [];
    expect(s.recordedUsd).to.be.closeTo(recordedUsd ?? Number.NaN, 1e-9);
    expect(s.replayedUsd).to.be.closeTo(replayedUsd ?? Number.NaN, 1e-9);
  }
  const moved = [...want.spend.values()].filter(([a, b]) => Math.abs(a - b) > 1e-12);
  expect(res.spend.length).to.equal(Math.min(moved.length, 100));
}

onBothDatabases("request log: a what-if budget replay decided in the database", (db) => {
  const catalog = new ModelCatalog(defaultCatalog(), []);
  const priced = catalog.models().find((m) => m.endpoints.some((e) => e.pricePerMillionChars > 0));
  if (!priced) throw new Error("the default catalog has no priced model");
  const model = priced;
  const ws = "ws-replay-budget";
  const guardrailId = "gr-replay-budget";
  // Keys 0-2 belong to member m1, 3-4 to m2, 5 to nobody; the guardrail is the workspace default
  // of some (a member counter beside the key's) and assigned to the others.
  const keys = Array.from({ length: 6 }, (_, i) => `${i}`.repeat(64));
  const memberOf = (k: string) => {
    const i = keys.indexOf(k);
    return i <= 2 ? "m1" : i <= 4 ? "m2" : "";
  };
  const sourceOf = (i: number): GuardrailSource =>
    i % 2 === 0 ? "workspace_default" : i === 3 ? "member" : "key";
  const start = Date.UTC(2026, 10, 2);
  const recorded: RecordedRequest[] = [];

  before(async () => {
    const next = random(7);
    const policy = create(DataPolicySchema, {});
    const provider = model.endpoints[0]?.provider ?? "";
    const batch: Generation[] = [];
    for (let i = 0; i < 1_500; i++) {
      const k = Math.floor(next() * keys.length);
      const keyHash = keys[k] as string;
      const atMs = start + Math.floor(next() * 9 * DAY);
      const characters = 10 + Math.floor(next() * 500);
      const refused = next() < 0.1;
      const byok = !refused && next() < 0.1;
      const costUsd = refused ? 0 : characters * 0.00002;
      const source = sourceOf(k);
      const id = `gen-${String(i).padStart(5, "0")}`;
      batch.push(
        create(GenerationSchema, {
          id,
          model: model.id,
          provider: refused ? "" : provider,
          characters,
          costUsd,
          byok,
          format: AudioFormat.MP3,
          keyHash,
          workspaceId: ws,
          status: refused ? GenerationStatus.REFUSED : GenerationStatus.COMPLETED,
          refusalReason: refused ? "budget_exceeded" : "",
          guardrailId: refused ? guardrailId : "",
          dataRegion: Region.GLOBAL,
          governedBy: [`${source}:${guardrailId}`],
          servedDataPolicy: refused ? undefined : policy,
          createdAt: timestampFromMs(atMs),
        }),
      );
      recorded.push({
        id,
        atMs,
        keyHash,
        memberUserId: memberOf(keyHash),
        source,
        model: model.id,
        provider: refused ? "" : provider,
        outcome: refused ? "refused" : "served",
        refusalReason: refused ? "budget_exceeded" : "",
        decidedBy: refused ? guardrailId : "",
        byok,
        costUsd,
        characters,
        region: "global",
        endpointPolicy: refused ? undefined : policy,
      });
    }
    await new GenerationRecords(db()).insert(batch);
    recorded.sort((a, b) => a.atMs - b.atMs || (a.id < b.id ? -1 : 1));
  });

  for (const [limitUsd, interval] of [
    [0.02, ResetInterval.DAILY],
    [0.2, ResetInterval.DAILY],
    [0.5, ResetInterval.WEEKLY],
    [1_000, ResetInterval.MONTHLY],
  ] as const) {
    it(`agrees with a replay of every record in turn: $${limitUsd} ${ResetInterval[interval].toLowerCase()}`, async () => {
      const current = create(GuardrailSchema, { id: guardrailId, workspaceId: ws, name: "g" });
      const proposed = create(GuardrailSchema, {
        ...current,
        limitUsd,
        resetInterval: interval,
      });
      const res = await simulate(
        { database: db(), catalog, account: ACCOUNT, retentionDays: 3650 },
        async (k) => memberOf(k),
        current,
        proposed,
        start,
        start + 10 * DAY,
      );
      const want = oneByOne(catalog, recorded, proposed);
      expectAgreement(res, want, recorded.length);
      if (limitUsd < 1) expect(want.refused).to.be.greaterThan(0);
    });
  }
});

onBothDatabases(
  "request log: a what-if budget replay of lone counters, every window overflowing",
  (db) => {
    const catalog = new ModelCatalog(defaultCatalog(), []);
    const model = catalog.models().find((m) => m.endpoints.some((e) => e.pricePerMillionChars > 0));
    if (!model) throw new Error("the default catalog has no priced model");
    const provider = model.endpoints[0]?.provider ?? "";
    const ws = "ws-replay-lone";
    const guardrailId = "gr-replay-lone";
    // Each request is checked against one counter only: keys 0-2 their own, keys 3-4 their
    // member's (m9, both keys' requests in one window); no member counter beside a key's.
    const keys = Array.from({ length: 5 }, (_, i) => `${String.fromCharCode(97 + i)}`.repeat(64));
    // Keys of their own for the requests made to show one case each (spend is per key).
    const crafted = ["x", "y", "z"].map((c) => c.repeat(64)) as [string, string, string];
    const sourceOf = (k: string): GuardrailSource => (keys.indexOf(k) >= 3 ? "member" : "key");
    const memberOf = (k: string) => (keys.indexOf(k) >= 3 ? "m9" : "");
    const start = Date.UTC(2026, 10, 2);
    const recorded: RecordedRequest[] = [];
    const HOUR = 3_600_000;

    before(async () => {
      const policy = create(DataPolicySchema, {});
      const batch: Generation[] = [];
      const add = (
        id: string,
        keyHash: string,
        atMs: number,
        costUsd: number,
        refused = false,
        byok = false,
      ) => {
        const characters = 100 + (batch.length % 400);
        batch.push(
          create(GenerationSchema, {
            id,
            model: model.id,
            provider: refused ? "" : provider,
            characters,
            costUsd: refused ? 0 : costUsd,
            byok,
            format: AudioFormat.MP3,
            keyHash,
            workspaceId: ws,
            status: refused ? GenerationStatus.REFUSED : GenerationStatus.COMPLETED,
            refusalReason: refused ? "budget_exceeded" : "",
            guardrailId: refused ? guardrailId : "",
            dataRegion: Region.GLOBAL,
            governedBy: [`${sourceOf(keyHash)}:${guardrailId}`],
            servedDataPolicy: refused ? undefined : policy,
            createdAt: timestampFromMs(atMs),
          }),
        );
        recorded.push({
          id,
          atMs,
          keyHash,
          memberUserId: memberOf(keyHash),
          source: sourceOf(keyHash),
          model: model.id,
          provider: refused ? "" : provider,
          outcome: refused ? "refused" : "served",
          refusalReason: refused ? "budget_exceeded" : "",
          decidedBy: refused ? guardrailId : "",
          byok,
          costUsd: refused ? 0 : costUsd,
          characters,
          region: "global",
          endpointPolicy: refused ? undefined : policy,
        });
      };
      const [a, b, c] = crafted;
      // Day 0, key a, a $0.10 daily limit: a refusal leaves room that later, smaller requests
      // fill to the limit exactly, after which even the smallest is refused.
      add("a-1", a, start + HOUR, 0.06);
      add("a-2", a, start + 2 * HOUR, 0.05);
      add("a-3", a, start + 3 * HOUR, 0.03);
      add("a-4", a, start + 4 * HOUR, 0.01);
      add("a-5", a, start + 5 * HOUR, 0.001);
      // A BYOK request the budget leaves out costs it nothing: admitted however spent the window.
      add("a-6", a, start + 6 * HOUR, 0.02, false, true);
      // Key b: three requests in the same millisecond, replayed in id order: b-0, b-1, b-2.
      add("b-1", b, start + HOUR, 0.06);
      add("b-0", b, start + HOUR, 0.05);
      add("b-2", b, start + HOUR, 0.05);
      // Key c: the first request alone is over the limit, and every later one is undecided
      // until the ten that fit have been admitted.
      add("c-00", c, start + HOUR, 0.5);
      for (let i = 1; i <= 12; i++)
        add(`c-${String(i).padStart(2, "0")}`, c, start + (1 + i) * HOUR, 0.01);
      // Days 1-6, every key: about six times the limit a day, some days opening with a request
      // over it, times on whole minutes so that requests tie.
      const next = random(11);
      for (let day = 1; day <= 6; day++) {
        for (const k of keys) {
          if (next() < 0.5) add(`o-${day}-${keys.indexOf(k)}`, k, start + day * DAY, 0.15);
          for (let i = 0; i < 60; i++) {
            const atMs = start + day * DAY + Math.floor(next() * 1_440) * 60_000;
            add(
              `r-${day}-${keys.indexOf(k)}-${i}`,
              k,
              atMs,
              0.001 + Math.floor(next() * 20) / 1_000,
              next() < 0.05,
            );
          }
        }
      }
      await new GenerationRecords(db()).insert(batch);
      recorded.sort((x, y) => x.atMs - y.atMs || (x.id < y.id ? -1 : 1));
    });

    const replayed = (limitUsd: number, interval: ResetInterval) => {
      const current = create(GuardrailSchema, { id: guardrailId, workspaceId: ws, name: "g" });
      const proposed = create(GuardrailSchema, { ...current, limitUsd, resetInterval: interval });
      return {
        proposed,
        result: simulate(
          { database: db(), catalog, account: ACCOUNT, retentionDays: 3650 },
          async (k) => memberOf(k),
          current,
          proposed,
          start,
          start + 8 * DAY,
        ),
      };
    };

    it("admits what fits after a refusal, to the limit exactly, what costs it nothing, and breaks ties by id", async () => {
      const { proposed, result } = replayed(0.1, ResetInterval.DAILY);
      const res = await result;
      expectAgreement(res, oneByOne(catalog, recorded, proposed), recorded.length);
      const spendOf = (k: string) => res.spend.find((s) => s.subject === k);
      // a: a-1, a-3, a-4 admitted ($0.10) and the BYOK a-6; b: b-0 and b-2; c: ten of the $0.01.
      expect(spendOf(crafted[0])?.replayedUsd).to.be.closeTo(0.12, 1e-9);
      expect(spendOf(crafted[1])?.replayedUsd).to.be.closeTo(0.1, 1e-9);
      expect(spendOf(crafted[2])?.replayedUsd).to.be.closeTo(0.1, 1e-9);
      expect(spendOf(crafted[0])?.recordedUsd).to.be.closeTo(0.171, 1e-9);
      expect(spendOf(crafted[1])?.recordedUsd).to.be.closeTo(0.16, 1e-9);
      expect(spendOf(crafted[2])?.recordedUsd).to.be.closeTo(0.62, 1e-9);
    });

    for (const [limitUsd, interval] of [
      [0.05, ResetInterval.DAILY],
      [0.3, ResetInterval.WEEKLY],
    ] as const) {
      it(`agrees with a replay of every record in turn: $${limitUsd} ${ResetInterval[interval].toLowerCase()}`, async () => {
        const { proposed, result } = replayed(limitUsd, interval);
        const want = oneByOne(catalog, recorded, proposed);
        expectAgreement(await result, want, recorded.length);
        expect(want.refused).to.be.greaterThan(recorded.length / 2);
      });
    }
  },
);
