import { hash, randomBytes, randomFillSync } from "node:crypto";
import { v4 as uuidv4, v5 as uuidv5, v7 as uuidv7 } from "uuid";

/** Namespace of the deterministic default-guardrail ids (a fixed, random UUID). */
const DEFAULT_GUARDRAIL_NAMESPACE = "8f4a1c1e-52d3-4e7a-9b0e-2d6c0f3b7a11";

export function newId(): string {
  return uuidv4();
}

/**
 * Random bytes for UUIDv7s, drawn 4 KiB at a time: uuid's own v7 asks the kernel for 16 bytes
 * per id (~2.7 µs; one per speech request), this costs ~0.3 µs like a v4.
 */
const randomPool = Buffer.allocUnsafe(4096);
let randomAt = randomPool.length;
function random16(): Uint8Array {
  if (randomAt === randomPool.length) {
    randomFillSync(randomPool);
    randomAt = 0;
  }
  randomAt += 16;
  return randomPool.subarray(randomAt - 16, randomAt);
}

/**
 * uuid keeps v7's monotonic state only when it draws the random bytes itself, so the state is
 * kept here, as uuid keeps it: a new millisecond starts the counter at a random 31-bit value,
 * the same millisecond counts up (and borrows the next millisecond when the counter wraps).
 */
let v7Msecs = Number.NEGATIVE_INFINITY;
let v7Seq = 0;

/**
 * A UUIDv7: ids made later in this process sort after earlier ones, even within one
 * millisecond, so records ordered by (time, id) keep the order they were made in.
 */
export function newOrderedId(): string {
  const random = random16();
  const now = Date.now();
  if (now > v7Msecs) {
    v7Msecs = now;
    v7Seq =
      (((random[6] as number) & 0x7f) << 24) |
      ((random[7] as number) << 16) |
      ((random[8] as number) << 8) |
      (random[9] as number);
  } else {
    v7Seq = (v7Seq + 1) | 0;
    if (v7Seq === 0) v7Msecs++;
  }
  return uuidv7({ random, msecs: v7Msecs, seq: v7Seq });
}

/** A generation's id: "gen-" and a time-ordered UUID (the request log lists newest first by it). */
export function newGenerationId(): string {
  return `gen-${newOrderedId()}`;
}

/** Every workspace has one default guardrail whose id is derived from the workspace id. */
export function defaultGuardrailId(workspaceId: string): string {
  return uuidv5(workspaceId, DEFAULT_GUARDRAIL_NAMESPACE);
}

/** Namespace of the deterministic workspace-membership ids (a fixed, random UUID). */
const MEMBERSHIP_NAMESPACE = "3c9e5b20-7f1d-4a86-b4e2-91d0a6c58f37";

/**
 * A workspace membership's id, derived from the workspace and the user: an implicit member and
 * the same user once added answer with one id, and a listing is stable from call to call.
 */
export function membershipId(workspaceId: string, userId: string): string {
  return uuidv5(`${workspaceId}\u0000${userId}`, MEMBERSHIP_NAMESPACE);
}

/**
 * Lowercase only: ids are stored as generated, so an uppercase form would never match.
 * Exported for the API document, which states the same rule.
 */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}

/** RFC 4122: "The hexadecimal values a through f are output as lower case characters and are
 * case insensitive on input." So ids are taken in either case and kept in lower case. */
const UUID_ANY_CASE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** What the API document states for ids given to it: either case (the gateway lowers them). */
export const UUID_INPUT_PATTERN =
  "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";
const GENERATION_ID_ANY_CASE =
  /^gen-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A UUID (or a generation id, "gen-" and a UUID) as it is stored: lower case. Anything else is
 * returned as given, for the rule that checks it to refuse by name.
 */
export function canonicalId(s: string): string {
  return UUID_ANY_CASE.test(s) || GENERATION_ID_ANY_CASE.test(s) ? s.toLowerCase() : s;
}

/** Keys are stored only as this hash, which is also their public identifier. */
export function hashSecret(secret: string): string {
  // The one-shot hash: half the cost of a Hash object, and every request pays it (twice co-located).
  return hash("sha256", secret, "hex");
}

export function newSecret(kind: "management" | "standard"): string {
  const tag = kind === "management" ? "mgmt" : "v1";
  return `rg-${tag}-${randomBytes(32).toString("hex")}`;
}

const HASH_RE = /^[0-9a-f]{64}$/;
export function isKeyHash(s: string): boolean {
  return HASH_RE.test(s);
}

/** The fixed, public prefix of the secrets we mint (it tells the kind, not the secret). */
const PUBLIC_PREFIX = /^rg-(?:mgmt|v1)-/;

/**
 * A recognisable rendering of a secret that shows at most its last 4 secret
 * characters: our minted prefix is public, an operator's own secret shows
 * nothing before them.
 */
export function secretLabel(secret: string): string {
  const prefix = PUBLIC_PREFIX.exec(secret)?.[0] ?? "";
  return `${prefix}...${secret.slice(-4)}`;
}
