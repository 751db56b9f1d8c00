import type { HandlerContext } from "@connectrpc/connect";
import { REQUEST_ID_HEADER } from "../platform/rpc/request-id.js";
import { callerOf } from "./auth/caller-auth.js";

/**
 * What an audit event is about: the one list the services record, the store checks a filter
 * against and the gateway documents. Webhooks record theirs through the same call.
 */
export const AUDIT_RESOURCE_TYPES = [
  "key",
  "guardrail",
  "assignment",
  "workspace",
  "credits",
  "webhook",
  "guardrail_policy",
] as const;
export type AuditResourceType = (typeof AUDIT_RESOURCE_TYPES)[number];

/** Who made a change: the management key, by hash, secret label ("rg-mgmt-...abcd") and name. */
export interface AuditActor {
  keyHash: string;
  label: string;
  name: string;
}

/** Where a change came from: its actor and the request id (x-request-id) that carried it. */
export interface AuditOrigin {
  actor: AuditActor;
  /** Undefined for a direct gRPC caller that sent none. */
  requestId?: string;
}

/**
 * The origin of a management call, from what the authentication interceptor resolved (the
 * calling key) and the request id the gateway forwards as metadata: never from the message.
 */
export function auditOrigin(ctx: HandlerContext): AuditOrigin {
  const { key } = callerOf(ctx).principal;
  return {
    actor: { keyHash: key.hash, label: key.label, name: key.name },
    requestId: ctx.requestHeader.get(REQUEST_ID_HEADER) ?? undefined,
  };
}
