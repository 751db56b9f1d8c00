import type { ApiKey } from "../../gen/railgate/account/v1/account_pb.js";
import type { Page, Store } from "../../store/types.js";

const READ_PAGE = 500;
/** A search reads at most this many keys of its scope. */
const MAX_KEYS_READ = 10_000;

/** Whether a key's name or label contains `text`, or its hash starts with it (any case). */
function matches(key: ApiKey, text: string): boolean {
  return (
    key.name.toLowerCase().includes(text) ||
    key.label.toLowerCase().includes(text) ||
    key.hash.startsWith(text)
  );
}

/**
 * One page of the keys of `scope` (every workspace when undefined) that match `text`, and how
 * many match in all: the store keeps no index by name, so the scope's keys are read in pages
 * (a workspace holds at most a few thousand) and filtered here.
 */
export async function searchKeys(
  store: Store,
  scope: string | undefined,
  text: string,
  enabledOnly: boolean,
  offset: number,
  limit: number,
): Promise<Page<ApiKey>> {
  const wanted = text.toLowerCase();
  const found: ApiKey[] = [];
  for (let at = 0; at < MAX_KEYS_READ; at += READ_PAGE) {
    const page = await store.listKeys(scope, at, READ_PAGE, enabledOnly);
    for (const k of page.items) if (matches(k, wanted)) found.push(k);
    if (page.items.length < READ_PAGE || at + READ_PAGE >= page.total) break;
  }
  return { items: found.slice(offset, offset + limit), total: found.length };
}
