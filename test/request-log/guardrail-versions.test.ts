import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import { newId } from "../../domain/ids.js";
import { GuardrailSchema } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { applyConfigEntries } from "../../store/config-outbox/apply-sql.js";
import type { ConfigEntry } from "../../store/config-outbox/entry.js";
import { encodeFields } from "../../store/guardrail-fields.js";
import { AuditLog, auditEventOf } from "../../store/request-log/audit-log.js";
import { GuardrailVersions } from "../../store/request-log/guardrail-versions.js";
import { onBothDatabases } from "../kit/databases.js";

const DAY_MS = 86_400_000;
const ACTOR = { keyHash: "a".repeat(64), label: "sk-rg-…abcd", name: "ops" };

/** A drained change of guardrail `id` (its audit event and its snapshot), or its deletion. */
function entry(
  ws: string,
  id: string,
  action: string,
  at: Date,
  description?: string,
): ConfigEntry {
  const event = auditEventOf(
    { actor: ACTOR, requestId: "" },
    {
      action,
      resource: { type: "guardrail", id, label: "g" },
      workspaceId: ws,
      changes: description ? { description: { before: null, after: description } } : {},
    },
    at,
  );
  const bytes =
    description === undefined
      ? undefined
      : Buffer.concat(
          encodeFields(create(GuardrailSchema, { id, name: "g", description })).map(([, b]) => b),
        );
  return {
    scope: ws,
    stamp: at.getTime() * 1000,
    event: { audit: { ...event, at: at.toISOString() } },
    reply: [],
    snapshots: [{ type: "guardrail", id, version: 1, data: bytes && new Uint8Array(bytes) }],
  };
}

onBothDatabases("guardrail versions from the configuration drain", (getDb) => {
  it("numbers a guardrail's changes once each, however often the drain repeats them", async () => {
    const db = getDb();
    const [ws, id] = [newId(), newId()];
    const now = Date.now();
    const changes = [
      entry(ws, id, "guardrail.create", new Date(now - 2000), "one"),
      entry(ws, id, "guardrail.update", new Date(now - 1000), "two"),
    ];
    await applyConfigEntries(db, changes);
    await applyConfigEntries(db, changes);
    await applyConfigEntries(db, [changes[1] as ConfigEntry]);
    const versions = new GuardrailVersions(db);
    const page = await versions.list(id, 0, 10);
    expect(page.total).to.equal(2);
    expect(page.versions.map((v) => [v.version, v.action])).to.deep.equal([
      [2, "guardrail.update"],
      [1, "guardrail.create"],
    ]);
    expect(page.versions[0]?.changes).to.deep.equal({
      description: { before: null, after: "two" },
    });
    expect(page.versions[0]?.actor).to.deep.equal(ACTOR);
    expect((await versions.get(id, 1))?.data).to.be.instanceOf(Uint8Array);
    expect(await versions.get(id, 3)).to.equal(undefined);
  });

  it("keeps a deleted guardrail's versions for the audit retention, then drops them", async () => {
    const db = getDb();
    const [ws, gone, kept] = [newId(), newId(), newId()];
    const now = Date.now();
    await applyConfigEntries(db, [
      entry(ws, gone, "guardrail.create", new Date(now - 3000), "gone"),
      entry(ws, kept, "guardrail.create", new Date(now - 2000), "kept"),
      entry(ws, gone, "guardrail.delete", new Date(now - 1000)),
    ]);
    const versions = new GuardrailVersions(db);
    expect((await versions.list(gone, 0, 10)).versions[0]?.deletedAt).to.be.instanceOf(Date);
    const audit = new AuditLog(db, { retentionDays: 30, queueLimit: 10 });
    // Within the retention: still there.
    await audit.maintain(new Date(now + 29 * DAY_MS));
    expect((await versions.list(gone, 0, 10)).total).to.equal(1);
    // Past it: gone, while a live guardrail's versions stay however old.
    await audit.maintain(new Date(now + 31 * DAY_MS));
    expect((await versions.list(gone, 0, 10)).total).to.equal(0);
    expect((await versions.list(kept, 0, 10)).total).to.equal(1);
  });
});
