import type { AuditNote } from "../config-outbox/entry.js";
import { announced } from "./announced.js";
import { policyIdsOf } from "./policy-ids.js";
import type { PolicyDoc, PolicyDocStore, VersionedDoc } from "./types.js";

/** Records a document written (the embedded store's journal) before the write answers. */
export type PolicyDocJournal = (
  scope: string,
  version: number,
  text: string,
  audit: AuditNote | undefined,
) => Promise<void>;

/** Policy documents in the embedded store's memory, kept as JSON text so that no reader shares a writer's objects. */
export class MemoryPolicyDocs implements PolicyDocStore {
  private readonly docs = new Map<string, { version: number; text: string }>();
  private readonly ids = new Map<string, string>();
  private readonly guardrailWrites = new Map<string, number>();

  /** `changed` announces a workspace whose policies changed (the store's invalidation). */
  constructor(
    private readonly changed: (workspaceId: string) => void,
    private readonly journal: PolicyDocJournal = async () => {},
  ) {}

  /** At start: the documents the database holds, and the index rebuilt from them. */
  load(docs: readonly { scope: string; version: number; doc: string }[]): void {
    for (const d of docs) {
      this.docs.set(d.scope, { version: d.version, text: d.doc });
      for (const id of policyIdsOf(JSON.parse(d.doc) as PolicyDoc)) this.ids.set(id, d.scope);
    }
  }

  /** A deleted workspace's document goes with it, and the index entries of its policies. */
  forget(workspaceId: string): void {
    this.docs.delete(workspaceId);
    this.guardrailWrites.delete(workspaceId);
    for (const [id, scope] of this.ids) if (scope === workspaceId) this.ids.delete(id);
  }

  async read(workspaceId: string): Promise<VersionedDoc> {
    const found = this.docs.get(workspaceId);
    const guardrailWrites = this.guardrailWrites.get(workspaceId) ?? 0;
    if (!found) return { doc: { policies: [] }, version: 0, guardrailWrites };
    return { doc: JSON.parse(found.text) as PolicyDoc, version: found.version, guardrailWrites };
  }

  /** The document's version now (the store's guardrail writes check it in their own step). */
  versionOf(workspaceId: string): number {
    return this.docs.get(workspaceId)?.version ?? 0;
  }

  /** Counts a guardrail write of the workspace (the store calls it in the write's own step). */
  guardrailWritten(workspaceId: string): void {
    this.guardrailWrites.set(workspaceId, (this.guardrailWrites.get(workspaceId) ?? 0) + 1);
  }

  async write(
    workspaceId: string,
    expectedVersion: number,
    doc: PolicyDoc,
    expectedGuardrailWrites?: number,
    audit?: AuditNote,
  ): Promise<boolean> {
    // Check and write in one synchronous step: no other call can come between them.
    const version = this.docs.get(workspaceId)?.version ?? 0;
    if (version !== expectedVersion) return false;
    if (
      expectedGuardrailWrites !== undefined &&
      (this.guardrailWrites.get(workspaceId) ?? 0) !== expectedGuardrailWrites
    )
      return false;
    const text = JSON.stringify(doc);
    this.docs.set(workspaceId, { version: version + 1, text });
    this.changed(announced(workspaceId));
    await this.journal(workspaceId, version + 1, text, audit);
    return true;
  }

  async workspaceOf(policyId: string): Promise<string | undefined> {
    return this.ids.get(policyId);
  }

  async index(policyId: string, workspaceId: string | undefined): Promise<void> {
    if (workspaceId === undefined) this.ids.delete(policyId);
    else this.ids.set(policyId, workspaceId);
  }
}
