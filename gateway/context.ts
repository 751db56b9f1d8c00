import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApiKey } from "../gen/railgate/account/v1/account_pb.js";
import type { ServiceClients } from "./clients.js";
import type { KeyCache } from "./key-cache.js";

export type RegionName = "global" | "europe" | "us";

/**
 * Who may call a route. "delegated": the gateway only hashes the bearer key
 * and the owning service authenticates it with its cached principal, which
 * saves the speech hot path a round trip.
 */
export type Access = "public" | "management" | "standard" | "any-key" | "delegated";

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Record<string, string>;
  /** The listener the request arrived through; never chosen by the client. */
  region: RegionName;
  clients: ServiceClients;
  maxBodyBytes: number;
  /** Speech bodies carry reference audio, so they get a larger cap. */
  maxSpeechBodyBytes: number;
  /** Set for every route but public and delegated ones. */
  key?: ApiKey;
  /** SHA-256 of the bearer key: set for every route but public ones. */
  keyHash?: string;
  /** Authenticated keys (absent in tests that build a bare gateway). */
  keyCache?: KeyCache;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

export type Handler = (ctx: RequestContext) => Promise<void>;

export interface Route {
  pattern: string;
  access: Access;
  methods: Partial<Record<string, Handler>>;
}
