/**
 * The resource each operation belongs to, as an OpenAPI tag: /docs groups operations by tag.
 * A path no prefix matches fails the document's build, so a new resource is given its group.
 */
export const TAGS: { name: string; description: string; paths: RegExp }[] = [
  {
    name: "Speech",
    description: "Text to speech, streamed as it is made (OpenAI's and OpenRouter's shape)",
    paths: /^\/api\/v1\/audio\//,
  },
  {
    name: "Models",
    description: "The speech models, their voices and their providers' endpoints",
    paths: /^\/api\/v1\/(models?|endpoints)(\/|$)/,
  },
  {
    name: "API keys",
    description: "Standard and management keys, their limits, and why a key may or may not speak",
    paths: /^\/api\/v1\/keys?(\/|$)/,
  },
  {
    name: "Guardrails",
    description:
      "Spend limits, allowed models and providers, regions, filters; assigned to keys and members",
    paths: /^\/api\/v1\/guardrails(\/|$)/,
  },
  {
    name: "Credits",
    description: "A workspace's prepaid balance",
    paths: /^\/api\/v1\/(credits$|workspaces\/[^/]+\/credits$)/,
  },
  {
    name: "Workspaces",
    description: "Workspaces, which own keys, guardrails and credits, and their members",
    paths: /^\/api\/v1\/workspaces(\/|$)/,
  },
  {
    name: "Generations",
    description: "The request log: one record per speech request",
    paths: /^\/api\/v1\/generations?(\/|$)/,
  },
  {
    name: "Activity and usage",
    description: "Aggregates of the request log: per completed UTC day, and series by hour or day",
    paths: /^\/api\/v1\/(activity|usage)$/,
  },
  {
    name: "Audit log",
    description: "Who changed what, through the management API",
    paths: /^\/api\/v1\/audit-log$/,
  },
  {
    name: "Webhooks",
    description: "Events posted to your endpoints, signed, with their delivery history",
    paths: /^\/api\/v1\/webhooks(\/|$)/,
  },
  {
    name: "Operations",
    description: "Health, metrics and this document",
    paths: /^(\/healthz|\/livez|\/metrics|\/api\/v1\/openapi\.json)$/,
  },
];

/** The tag of an OpenAPI path ("/api/v1/keys/{hash}"). */
export function tagOf(path: string): string {
  const tag = TAGS.find((t) => t.paths.test(path));
  if (!tag) throw new Error(`OpenAPI: ${path} belongs to no tag (gateway/openapi/tags.ts)`);
  return tag.name;
}
