import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import { errorInfoOf } from "../rpc/errors.js";

/**
 * What a log line may hold of an error or a protobuf value. Logged whole, a ConnectError
 * carries its details (each a protobuf message with its whole descriptor: the file, every
 * field, hundreds of lines per error) and a DOMException two dozen constants; a message
 * logged as a field is the same. The logger runs every field through these (platform/observability/logger.ts).
 */

/**
 * Codes that are a fault of ours for an operator to act on: these keep their stack. Every
 * other code is an outcome (the caller went away, a provider refused, a limit was met) whose
 * stack says nothing the code and the message do not.
 */
const FAULT_CODES = new Set<Code>([Code.Internal, Code.Unknown, Code.DataLoss]);

const MAX_CAUSES = 3;

/** A protobuf message (`$typeName`) or descriptor (`kind` + `typeName`), by name only. */
function protobufName(value: object): string | undefined {
  const v = value as { $typeName?: unknown; kind?: unknown; typeName?: unknown };
  if (typeof v.$typeName === "string") return v.$typeName;
  if (typeof v.kind === "string" && typeof v.typeName === "string") {
    return `${v.kind} descriptor ${v.typeName}`;
  }
  return undefined;
}

/** The `err` field: type, code, message, and a stack only where it helps (see FAULT_CODES). */
export function errorForLog(err: unknown, depth = 0, stacks = true): unknown {
  if (!(err instanceof Error)) return fieldForLog(err);
  // The causes of an outcome (a provider refused: its socket error) are outcomes too.
  let causeStacks = stacks;
  const out: Record<string, unknown> = { type: err.name, message: err.message };
  if (err instanceof ConnectError) {
    out.type = "ConnectError";
    out.code = Code[err.code];
    out.message = err.rawMessage;
    const info = errorInfoOf(err);
    if (info) out.reason = ErrorReason[info.reason];
    // The details by type name: their descriptors never.
    if (err.details.length > 0) {
      out.details = err.details.map((d) => ("desc" in d ? d.desc.typeName : d.type));
    }
    if (FAULT_CODES.has(err.code)) out.stack = err.stack;
    else causeStacks = false;
  } else {
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string" || typeof code === "number") out.code = code;
    // An AbortError is how a cancellation arrives, never a fault: its stack is noise.
    if (stacks && err.name !== "AbortError") out.stack = err.stack;
  }
  if (err.cause !== undefined && depth < MAX_CAUSES)
    out.cause = errorForLog(err.cause, depth + 1, causeStacks);
  return out;
}

/** Any other field: a protobuf message or descriptor becomes its name; the rest is kept. */
export function fieldForLog(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  const name = protobufName(value);
  return name === undefined ? value : { protobuf: name };
}

/** Pino's `formatters.log`: each top-level field of a line through fieldForLog (cheap: no walk). */
export function logFieldsForLog(fields: Record<string, unknown>): Record<string, unknown> {
  let out = fields;
  for (const [key, value] of Object.entries(fields)) {
    if (key === "err" || typeof value !== "object" || value === null) continue;
    const safe = fieldForLog(value);
    if (safe !== value) {
      if (out === fields) out = { ...fields };
      out[key] = safe;
    }
  }
  return out;
}
