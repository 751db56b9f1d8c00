/**
 * What the usage report adds up by (group_by): the gateway's query parameter, the speech
 * service's rule and the request log's query read this one list.
 */
export const USAGE_GROUPS = [
  "key",
  "guardrail",
  "model",
  "provider",
  "workspace",
  "status",
] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];
