import { fileURLToPath } from "node:url";

/**
 * The processes of a split deployment by the names docker-compose and the chart give them:
 * "guardrail" is the control plane (apps/control-plane: the guardrail, policy, account and
 * webhook services), "speech" and "gateway" their own entries.
 */
export type ProcessKind = "gateway" | "guardrail" | "speech";

const ENTRY_DIR: Record<ProcessKind, string> = {
  gateway: "gateway",
  guardrail: "control-plane",
  speech: "speech",
};

/** The compiled entry a kind of process runs (dist/apps/<entry>/main.js). */
export function appEntry(kind: ProcessKind): string {
  return fileURLToPath(new URL(`../../apps/${ENTRY_DIR[kind]}/main.js`, import.meta.url));
}

/** The line with which a gRPC process says it serves, and on which port (apps/<entry>/main.ts). */
export function upLine(kind: Exclude<ProcessKind, "gateway">): RegExp {
  return kind === "guardrail" ? /"msg":"control plane is up"/ : /"msg":"speech service is up"/;
}
