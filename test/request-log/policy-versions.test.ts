import { expect } from "chai";
import { newId } from "../../domain/ids.js";
import { AuditLog } from "../../store/request-log/audit-log.js";
import {
  insertPolicyVersion,
  markPolicyVersionsDeleted,
  PolicyVersions,
} from "../../store/request-log/policy-versions.js";
import { onBothDatabases } from "../kit/databases.js";

const DAY_MS = 86_400_000;
const ORIGIN = {
  actor: { keyHash: "a".repeat(64), label: "sk-rg-…abcd", name: "ops" },
  requestId: "",
};

onBothDatabases("guardrail policy versions, written with their audit events", (getDb) => {
  const log = () => new AuditLog(getDb(), { retentionDays: 30, queueLimit: 10 });

  /** Records a change of policy `id` as version `n`, the way the policy service does. */
  function change(audit: AuditLog, id: string, n: number, action: string, name: string) {
    const snapshot = {
      policyType: "moderation",
      policyId: id,
      workspaceId: "w",
      version: n,
      data: { id, name, config: {} },
    };
    return audit.recordDurably(
      ORIGIN,
      {
        action,
        resource: { type: "guardrail_policy", id, label: name },
        changes: {
          name: { before: null, after: name },
          forced: { before: null, after: true },
          restored_from_version: { before: null, after: 1 },
        },
      },
      new Date(),
      (tx, event) => insertPolicyVersion(tx, event, snapshot),
    );
  }

  it("stores a version with its audit event, its notes as columns, once however often written", async () => {
    const audit = log();
    const id = newId();
    await change(audit, id, 1, "guardrail_policy.create", "one");
    const event = await change(audit, id, 2, "guardrail_policy.restore", "two");
    const versions = new PolicyVersions(getDb());
    // The same event written again (a retried batch) adds nothing.
    await getDb().transaction((tx) =>
      insertPolicyVersion(tx, event, {
        policyType: "moderation",
        policyId: id,
        workspaceId: "w",
        version: 3,
        data: {},
      }),
    );
    const page = await versions.list("moderation", id, 0, 10);
    expect(page.total).to.equal(2);
    const [latest] = page.versions;
    expect(latest).to.include({ version: 2, forced: true, restoredFrom: 1 });
    expect(latest?.changes).to.deep.equal({ name: { before: null, after: "two" } });
    expect(latest?.actor).to.deep.equal(ORIGIN.actor);
    expect((await versions.get("moderation", id, 2))?.data).to.deep.include({ name: "two" });
    // Another type's policy with the same id (a guardrail split into policies) is another history.
    expect((await versions.list("budget", id, 0, 10)).total).to.equal(0);
    expect(await versions.range("moderation", id)).to.deep.equal({ first: 1, last: 2 });
    const [stored] = (
      await audit.list({ resourceId: id, limit: 10, action: "guardrail_policy.restore" })
    ).events;
    expect(stored?.id).to.equal(event.id);
    await audit.close();
  });

  it("stores an event only with its version: while the version cannot be written, neither is", async () => {
    const audit = log();
    const id = newId();
    let away = true;
    const event = await audit.recordDurably(
      ORIGIN,
      {
        action: "guardrail_policy.create",
        resource: { type: "guardrail_policy", id },
        changes: {},
      },
      new Date(),
      async (tx, e) => {
        if (away) throw new Error("the versions table is away");
        await insertPolicyVersion(tx, e, {
          policyType: "budget",
          policyId: id,
          workspaceId: "w",
          version: 1,
          data: { id },
        });
      },
    );
    const stored = () =>
      getDb().query<{ n: number }>("SELECT count(*)::int AS n FROM audit_events WHERE id = $1", [
        event.id,
      ]);
    // The failed transaction left nothing, and the event waits in the queue with its version.
    expect((await stored())[0]?.n).to.equal(0);
    away = false;
    await audit.written();
    expect((await stored())[0]?.n).to.equal(1);
    expect((await new PolicyVersions(getDb()).list("budget", id, 0, 10)).total).to.equal(1);
    await audit.close();
  });

  it("keeps a deleted policy's versions for the audit retention, then drops them", async () => {
    const audit = log();
    const [gone, kept] = [newId(), newId()];
    const now = Date.now();
    await change(audit, gone, 1, "guardrail_policy.create", "gone");
    await change(audit, kept, 1, "guardrail_policy.create", "kept");
    await getDb().transaction((tx) =>
      markPolicyVersionsDeleted(tx, "moderation", gone, new Date(now)),
    );
    const versions = new PolicyVersions(getDb());
    expect(
      (await versions.list("moderation", gone, 0, 10)).versions[0]?.deletedAt,
    ).to.be.instanceOf(Date);
    await audit.maintain(new Date(now + 29 * DAY_MS));
    expect((await versions.list("moderation", gone, 0, 10)).total).to.equal(1);
    await audit.maintain(new Date(now + 31 * DAY_MS));
    expect((await versions.list("moderation", gone, 0, 10)).total).to.equal(0);
    expect((await versions.list("moderation", kept, 0, 10)).total).to.equal(1);
    await audit.close();
  });
});
