import type { AuditOrigin } from "../../domain/audit.js";
import type { AuditEntry, AuditEvent } from "../request-log/audit-log.js";

/** What a service hands the store with a management write: the audit entry and who made it. */
export interface AuditNote {
  origin: AuditOrigin;
  entry: AuditEntry;
}

/**
 * What a write puts in its workspace's outbox besides the objects' snapshots, as JSON: the
 * audit event (its id made before the write, so a drain repeated is stored once), a credit
 * movement for the ledger, the default workspace's id when a write sets it.
 */
export interface OutboxEvent {
  audit?: Omit<AuditEvent, "at"> & { at: string };
  /** A top-up or correction: the audit's balance fields come from the script's reply. */
  credits?: { id: string; workspaceId: string; amountMicros: number; at: string };
  defaultWorkspace?: string;
}

/**
 * The objects a write's outbox entry carries after the change, read by the script itself in
 * the same atomic step (so the snapshot is exactly what Redis holds then):
 * ["ws", id], ["g", guardrail id], ["k", key hash], ["a", "ka" | "ma", subject], ["m", user id]
 * (a workspace member), ["c"] (credits), ["p"] (the scope's policy document and its version).
 */
export type SnapshotSpec =
  | ["ws", string]
  | ["p"]
  | ["m", string]
  | ["g", string]
  | ["k", string]
  | ["a", "ka" | "ma", string]
  | ["c"];

/** One object after a change; `data` undefined is a tombstone (it no longer exists). */
export type Snapshot =
  | { type: "workspace"; id: string; data?: Uint8Array }
  | { type: "guardrail"; id: string; version: number; data?: Uint8Array }
  | { type: "key"; hash: string; data?: Uint8Array }
  | { type: "assignment"; kind: "key" | "member"; subject: string; record?: string }
  | { type: "member"; userId: string; record?: string }
  | { type: "credits"; balanceMicros?: number; addedMicros?: number }
  /** The scope's guardrail policy document (store/policies' JSON) at `version`. */
  | { type: "policies"; version: number; doc?: string };

/** One drained change: where it sits in its scope's order, what it recorded, what it left. */
export interface ConfigEntry {
  /** The scope (workspace id, or "org") whose outbox held it. */
  scope: string;
  /** Orders the changes of one scope: an older stamp never overwrites a newer one. */
  stamp: number;
  event: OutboxEvent;
  /** The numbers of the script's reply after its status (credits: balance, was metered). */
  reply: number[];
  snapshots: Snapshot[];
}

/** A Redis stream id ("<ms>-<seq>") as one number that keeps its order. */
export function stampOf(streamId: string): number {
  const [ms, seq] = streamId.split("-");
  return Number(ms) * 1000 + Math.min(999, Number(seq ?? 0));
}

const STRING = (b: Buffer) => b.toString("utf8");

/**
 * One outbox stream entry read back: fields "e" (event), "r" (reply numbers), then one per
 * snapshot (see CONFIG_OUTBOX_LUA): "ws:<id>", "g:<id>" with "gv:<id>", "k:<hash>",
 * "a:<ka|ma>:<subject>", "m:<user id>", "c" with "ca", "p" with "pv". An empty value is a tombstone.
 */
export function parseOutboxEntry(scope: string, id: string, fields: Buffer[]): ConfigEntry {
  let event: OutboxEvent = {};
  let reply: number[] = [];
  const snapshots: Snapshot[] = [];
  const versions = new Map<string, number>();
  let credits: { balanceMicros?: number; addedMicros?: number } | undefined;
  let policies: { version: number; doc?: string } | undefined;
  const pending: { name: string; value: Buffer }[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = STRING(fields[i] as Buffer);
    const value = fields[i + 1] as Buffer;
    if (name === "e") event = JSON.parse(STRING(value)) as OutboxEvent;
    else if (name === "r")
      reply = STRING(value)
        .split(",")
        .filter((s) => s !== "")
        .map(Number);
    else if (name.startsWith("gv:")) versions.set(name.slice(3), Number(STRING(value)));
    else if (name === "c" || name === "ca") {
      credits ??= {};
      const n = value.length === 0 ? undefined : Number(STRING(value));
      if (name === "c") credits.balanceMicros = n;
      else credits.addedMicros = n;
    } else if (name === "p" || name === "pv") {
      policies ??= { version: 0 };
      if (name === "pv") policies.version = Number(STRING(value) || "0");
      else if (value.length > 0) policies.doc = STRING(value);
    } else pending.push({ name, value });
  }
  for (const { name, value } of pending) {
    const colon = name.indexOf(":");
    const type = name.slice(0, colon);
    const rest = name.slice(colon + 1);
    const data = value.length === 0 ? undefined : new Uint8Array(value);
    if (type === "ws") snapshots.push({ type: "workspace", id: rest, data });
    else if (type === "g")
      snapshots.push({ type: "guardrail", id: rest, version: versions.get(rest) ?? 0, data });
    else if (type === "k") snapshots.push({ type: "key", hash: rest, data });
    else if (type === "m")
      snapshots.push({
        type: "member",
        userId: rest,
        record: value.length === 0 ? undefined : STRING(value),
      });
    else if (type === "a") {
      const tag = rest.slice(0, 2);
      snapshots.push({
        type: "assignment",
        kind: tag === "ka" ? "key" : "member",
        subject: rest.slice(3),
        record: value.length === 0 ? undefined : STRING(value),
      });
    }
  }
  if (credits) snapshots.push({ type: "credits", ...credits });
  if (policies) snapshots.push({ type: "policies", ...policies });
  return { scope, stamp: stampOf(id), event, reply, snapshots };
}
