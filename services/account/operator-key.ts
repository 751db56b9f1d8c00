import { setTimeout as sleep } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import { hashSecret, secretLabel } from "../../domain/ids.js";
import { type ApiKey, ApiKeySchema, KeyKind } from "../../gen/railgate/account/v1/account_pb.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { nowTimestamp } from "../../platform/time.js";
import { isLimitReached } from "../../store/limits.js";
import { ORG_SCOPE, type Store } from "../../store/types.js";

const log = componentLogger("operator-key");
const NAME = "Operator management key (RAILGATE_MANAGEMENT_KEY)";
/** How often the key's presence is checked, for a store emptied without a reconnection (FLUSHALL). */
const CHECK_EVERY_MS = 5_000;
/** Another replica registering the key at the same moment: how long its write is waited for. */
const RACE_ATTEMPTS = 50;
const RACE_WAIT_MS = 20;

/**
 * The operator's management key from RAILGATE_MANAGEMENT_KEY. It lives in the
 * store like any key, so a store that comes back empty (Redis restarted without
 * persistence, FLUSHALL) would lose it and lock the operator out until a
 * restart. It is registered again, without a restart:
 * - when the store reconnects (its pub/sub connection announces it),
 * - at once when a request presents exactly this secret and finds no key,
 * - and by a cheap periodic check, for an emptying that caused no reconnection.
 * Each time, `onRestored` runs too (the guardrail server re-creates the default
 * workspace there: an emptied store is a first start).
 */
export class OperatorKey {
  readonly hash: string;
  private timer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  private ensuring?: Promise<ApiKey>;

  constructor(
    private readonly store: Store,
    private readonly secret: string,
    private readonly onRestored: () => Promise<unknown> = async () => {},
  ) {
    this.hash = hashSecret(secret);
  }

  /** Registers the key unless it is there; resolves with the stored key. One call at a time. */
  ensure(): Promise<ApiKey> {
    this.ensuring ??= this.register().finally(() => {
      this.ensuring = undefined;
    });
    return this.ensuring;
  }

  private async register(): Promise<ApiKey> {
    const existing = await this.store.getKey(ORG_SCOPE, this.hash);
    if (existing) {
      // Labels of older releases showed 14 characters of this secret: re-render them.
      const label = secretLabel(this.secret);
      if (existing.label !== label) {
        existing.label = label;
        await this.store.putKey(ORG_SCOPE, existing);
      }
      return existing;
    }
    const key = create(ApiKeySchema, {
      hash: this.hash,
      name: NAME,
      label: secretLabel(this.secret),
      kind: KeyKind.MANAGEMENT,
      createdAt: nowTimestamp(),
    });
    const result = await this.store.createKey(ORG_SCOPE, key);
    if (result === "exists") return this.registeredElsewhere();
    if (isLimitReached(result)) {
      throw new Error(
        `RAILGATE_MANAGEMENT_KEY cannot be registered: the organization already has ${result.count} management keys (the maximum is ${result.limit})`,
      );
    }
    log.info({ hash: this.hash }, "management key from RAILGATE_MANAGEMENT_KEY registered");
    await this.onRestored();
    return key;
  }

  /**
   * The hash is taken. Another replica starting at the same moment may be registering this very
   * key: the store claims a key's hash (its pointer to the key's scope) before it writes the
   * key, so for a moment the hash is taken and the key not yet readable. Seen as a start-up
   * failure, "already in use by a standard key", in a CI run of the scale-out suite (two
   * guardrail replicas starting together). So: the key once written wins; a hash pointing at a
   * workspace is a standard key's; a hash no longer taken (that replica's create failed) is
   * registered again; and a pointer to the organization without its key is waited for.
   */
  private async registeredElsewhere(): Promise<ApiKey> {
    for (let attempt = 0; attempt < RACE_ATTEMPTS; attempt++) {
      const raced = await this.store.getKey(ORG_SCOPE, this.hash);
      if (raced) return raced;
      const scope = await this.store.keyScope(this.hash);
      if (scope === undefined) return this.register();
      if (scope !== ORG_SCOPE) break;
      await sleep(RACE_WAIT_MS);
    }
    throw new Error("RAILGATE_MANAGEMENT_KEY is already in use by a standard key");
  }

  /**
   * For authentication: the operator key when `hash` is its hash and it had gone missing from
   * the store (registered again now), else undefined.
   */
  async recover(hash: string): Promise<ApiKey | undefined> {
    if (hash !== this.hash) return undefined;
    log.warn("the operator key was missing from the store (emptied?): registering it again");
    return this.ensure();
  }

  /** Starts re-registering on reconnection and on the periodic check. */
  watch(): void {
    const quietly = () => {
      this.ensure().catch((err: unknown) =>
        log.debug({ err: String(err) }, "operator key check failed (store unavailable?)"),
      );
    };
    this.unsubscribe = this.store.onInvalidate((scope) => scope === "*" && quietly());
    this.timer = setInterval(quietly, CHECK_EVERY_MS);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    this.unsubscribe?.();
  }
}

/** What the warning below tells an operator to run: the exact commands, for a copy and paste. */
export const FIRST_KEY_COMMANDS = [
  "export RAILGATE_MANAGEMENT_KEY=$(openssl rand -hex 32)   # then restart with it set",
  `curl -s -X POST http://localhost:8080/api/v1/keys -H "Authorization: Bearer $RAILGATE_MANAGEMENT_KEY" -H 'Content-Type: application/json' -d '{"name":"first key"}'`,
] as const;

/**
 * Start-up without RAILGATE_MANAGEMENT_KEY. No route mints a key without one, so when the
 * store holds no management key either (a first start), nobody can ever create an API key:
 * say so, loudly, with the commands that fix it. With management keys already in the store
 * (made with an earlier one), running without the variable is a choice: one info line.
 */
export async function reportWithoutOperatorKey(store: Store): Promise<void> {
  let existing: number | undefined;
  try {
    existing = (await store.listKeys(ORG_SCOPE, 0, 1, true)).total;
  } catch {
    existing = undefined;
  }
  if (existing !== undefined && existing > 0) {
    log.info(
      { managementKeys: existing },
      "RAILGATE_MANAGEMENT_KEY is not set; the store holds management keys made earlier",
    );
    return;
  }
  log.warn(
    { commands: FIRST_KEY_COMMANDS },
    `RAILGATE_MANAGEMENT_KEY is not set and the store holds no management key: no API key can be created. To mint the first key, set it and restart, then create a key with it: ${FIRST_KEY_COMMANDS.join(" ; then: ")}`,
  );
}
