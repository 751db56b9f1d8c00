import { expect } from "chai";
import {
  checkAuditTrail,
  checkCredits,
  checkDuplicateIds,
  checkKeySpend,
  checkRefusals,
  checkRequestLog,
  checkReservations,
  isTypedError,
} from "../../bench/soak/checks.js";
import { loadSoakConfig } from "../../bench/soak/config.js";
import type {
  AuditObservation,
  CallObservation,
  RecordObservation,
} from "../../bench/soak/observations.js";

const SPEECH = "POST /api/v1/audio/speech";
const typed = (code: number) => ({
  error: { code, message: "Key limit exceeded: limit is 0.002" },
});
const speech = (status: number, extra: Partial<CallObservation> = {}): CallObservation => ({
  kind: "speech",
  route: SPEECH,
  status,
  ...extra,
});
const write = (status: number, requestId: string): CallObservation => ({
  kind: "write",
  route: "POST /api/v1/keys",
  status,
  requestId,
});
const record = (id: string, costMicros: number, keyHash = "k1", workspaceId = "w1") =>
  ({ id, costMicros, keyHash, workspaceId }) satisfies RecordObservation;
const event = (id: string, requestId: string | null): AuditObservation => ({
  id,
  requestId,
  action: "key.create",
});

describe("soak checks", () => {
  describe("refusals", () => {
    it("passes typed refusals and successes, and ignores calls that got no answer", () => {
      const r = checkRefusals([
        speech(200, { generationId: "g1" }),
        speech(402, { errorBody: typed(402) }),
        speech(503, { errorBody: typed(503) }),
        speech(0),
      ]);
      expect(r).to.include({ checked: 3, failed: 0 });
    });

    it("fails a 500 even with a typed body, and a refusal without one", () => {
      const r = checkRefusals([
        speech(500, { errorBody: typed(500) }),
        speech(502, { errorBody: "Bad Gateway" }),
        speech(429, { errorBody: { error: { code: 429 } } }),
        speech(403, { errorBody: { message: "no" } }),
      ]);
      expect(r.failed).to.equal(4);
      expect(r.examples[0]).to.match(/500/);
    });

    it("knows the typed error shape", () => {
      expect(isTypedError(typed(400))).to.equal(true);
      expect(isTypedError({ error: { code: 400, message: "" } })).to.equal(false);
      expect(isTypedError(null)).to.equal(false);
      expect(isTypedError("text")).to.equal(false);
    });
  });

  describe("audit trail", () => {
    it("passes when every acknowledged write has an event with its request id", () => {
      const r = checkAuditTrail(
        [write(201, "r1"), write(200, "r2"), write(0, "r3"), write(503, "r4")],
        [event("e1", "r1"), event("e2", "r2")],
      );
      expect(r).to.include({ checked: 2, failed: 0 });
    });

    it("fails an acknowledged write whose event is missing", () => {
      const r = checkAuditTrail([write(201, "r1"), write(201, "r2")], [event("e1", "r1")]);
      expect(r).to.include({ checked: 2, failed: 1 });
      expect(r.examples[0]).to.include("r2");
    });
  });

  describe("request log", () => {
    it("passes one record per admitted request, refused requests needing none", () => {
      const r = checkRequestLog(
        [speech(200, { generationId: "g1" }), speech(200, { generationId: "g2" }), speech(402)],
        [record("g1", 40), record("g2", 10), record("g3", 0)],
      );
      expect(r).to.include({ checked: 2, failed: 0 });
    });

    it("fails an admitted request with no record, two records, or no generation id", () => {
      const r = checkRequestLog(
        [
          speech(200, { generationId: "g1" }),
          speech(200, { generationId: "g2" }),
          speech(200, { generationId: "" }),
        ],
        [record("g2", 10), record("g2", 10)],
      );
      expect(r).to.include({ checked: 3, failed: 3 });
    });
  });

  describe("spend", () => {
    it("passes a key whose usage is the sum of its records' costs", () => {
      const r = checkKeySpend(
        [
          { keyHash: "k1", usageMicros: 50 },
          { keyHash: "k2", usageMicros: 0 },
        ],
        [record("g1", 40), record("g2", 10)],
      );
      expect(r).to.include({ checked: 2, failed: 0 });
    });

    it("fails a key charged one micro-dollar more than its records", () => {
      const r = checkKeySpend([{ keyHash: "k1", usageMicros: 51 }], [record("g1", 50)]);
      expect(r.failed).to.equal(1);
      expect(r.examples[0]).to.match(/usage 51 .*records 50/);
    });

    it("passes credits used equal to the workspace's records, and fails a difference", () => {
      const records = [record("g1", 40, "k1", "w1"), record("g2", 10, "k2", "w1")];
      expect(
        checkCredits([{ workspaceId: "w1", addedMicros: 1_000, balanceMicros: 950 }], records),
      ).to.include({ failed: 0 });
      expect(
        checkCredits([{ workspaceId: "w1", addedMicros: 1_000, balanceMicros: 960 }], records),
      ).to.include({ failed: 1 });
    });
  });

  describe("reservations", () => {
    const now = 1_000_000;
    it("passes leases that expired within the bound", () => {
      const r = checkReservations(
        [
          { workspaceId: "w1", admissionId: "a1", leaseExpiryMs: now + 5_000 },
          { workspaceId: "w1", admissionId: "a2", leaseExpiryMs: now - 44_000 },
        ],
        now,
        45_000,
        true,
      );
      expect(r).to.include({ checked: 2, failed: 0 });
      expect(r.skipped).to.equal(undefined);
    });

    it("fails a lease that expired longer ago than the bound", () => {
      const r = checkReservations(
        [{ workspaceId: "w1", admissionId: "a1", leaseExpiryMs: now - 46_000 }],
        now,
        45_000,
        true,
      );
      expect(r.failed).to.equal(1);
    });

    it("says it was skipped when the store keeps no registry", () => {
      const r = checkReservations([], now, 45_000, false);
      expect(r.skipped).to.be.a("string");
      expect(r.failed).to.equal(0);
    });
  });

  describe("duplicate ids", () => {
    it("passes distinct ids", () => {
      const r = checkDuplicateIds(
        [speech(200, { generationId: "g1" }), speech(200, { generationId: "g2" })],
        [record("g1", 1), record("g2", 1)],
        [event("e1", "r1"), event("e2", "r2")],
      );
      expect(r).to.include({ checked: 6, failed: 0 });
    });

    it("fails a generation id answered twice, a record listed twice and an event id twice", () => {
      const r = checkDuplicateIds(
        [speech(200, { generationId: "g1" }), speech(200, { generationId: "g1" })],
        [record("g2", 1), record("g2", 1)],
        [event("e1", "r1"), event("e1", "r2")],
      );
      expect(r.failed).to.equal(3);
    });
  });

  describe("settings", () => {
    it("reads SOAK_* and refuses a malformed one, naming it", () => {
      const c = loadSoakConfig({ SOAK_MINUTES: "0.5", SOAK_REDIS: "standalone" });
      expect(c).to.include({ minutes: 0.5, redis: "standalone", recoverySeconds: 45 });
      expect(c.chaosEverySeconds).to.deep.equal([20, 40]);
      expect(() => loadSoakConfig({ SOAK_REDIS: "sentinel" })).to.throw(/SOAK_REDIS/);
      expect(() => loadSoakConfig({ SOAK_CHAOS_EVERY_S: "40-20" })).to.throw(/SOAK_CHAOS_EVERY_S/);
    });
  });
});
