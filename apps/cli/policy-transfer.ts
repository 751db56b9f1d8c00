import { isDeepStrictEqual } from "node:util";
import type { AuditNote } from "../../store/config-outbox/entry.js";
import { policyIdsOf } from "../../store/policies/policy-ids.js";
import { ACCOUNT_DOC, type PolicyDoc } from "../../store/policies/types.js";
import type { Store } from "../../store/types.js";

/** A scope's guardrail policy document as exported: a workspace's, or the account's ("org"). */
export interface PolicyDocEntry {
  scope: string;
  doc: PolicyDoc;
}

/** Every policy document that holds anything: the account's, then each workspace's. */
export async function exportPolicyDocs(
  store: Store,
  workspaceIds: readonly string[],
): Promise<PolicyDocEntry[]> {
  const docs = store.openPolicyDocs();
  const out: PolicyDocEntry[] = [];
  for (const scope of [ACCOUNT_DOC, ...workspaceIds]) {
    const { doc, version } = await docs.read(scope);
    if (version > 0) out.push({ scope, doc });
  }
  return out;
}

/** Documents written before an import gives up on a scope that keeps changing. */
const ATTEMPTS = 8;

/**
 * Writes each document unless the store's is already equal (so an import repeated changes
 * nothing), after indexing its policy ids; answers how many it wrote.
 */
export async function importPolicyDocs(
  store: Store,
  entries: readonly PolicyDocEntry[],
  note: (scope: string) => AuditNote,
): Promise<number> {
  const docs = store.openPolicyDocs();
  let written = 0;
  for (const { scope, doc } of entries) {
    for (let attempt = 0; ; attempt++) {
      if (attempt === ATTEMPTS) throw new Error(`policies of ${scope} kept changing: not imported`);
      const current = await docs.read(scope);
      if (current.version > 0 && isDeepStrictEqual(current.doc, doc)) break;
      // Indexed before the document names them, as every policy write does.
      for (const id of policyIdsOf(doc)) await docs.index(id, scope);
      if (await docs.write(scope, current.version, doc, undefined, note(scope))) {
        written++;
        break;
      }
    }
  }
  return written;
}
