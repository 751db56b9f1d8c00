import type { IncomingMessage, ServerResponse } from "node:http";
import type { ConnectError } from "@connectrpc/connect";
import type { AudioFormatName } from "../domain/audio-formats.js";
import type { RegionName } from "../domain/enums.js";
import type { ApiKey } from "../gen/railgate/account/v1/account_pb.js";
import type { SpeechStreamDeadlines } from "../platform/config/config.js";
import type { ServiceClients } from "./clients.js";
import type { KeyCache } from "./key-cache.js";
import type { JsonSchema } from "./openapi/spec-schema.js";

/** Who may call a route (the services check the same rule again on every call). */
export type Access = "public" | "management" | "standard" | "any-key";

/** Options of every service call made for a request: the client's key, its region, cancellation. */
export interface CallOptions {
  signal: AbortSignal;
  headers?: Record<string, string>;
}

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
  /** response_format when a speech request names none (RAILGATE_SPEECH_DEFAULT_FORMAT). */
  speechDefaultFormat: AudioFormatName;
  /** How long a speech stream may keep the client waiting for its first and each next message. */
  speechStream: SpeechStreamDeadlines;
  /** The authenticated key: set for every route but public ones. */
  key?: ApiKey;
  /**
   * On a route that logs refused requests, the refusal of a known key (disabled, expired, its
   * region): the handler still calls the service (without reading the body), which refuses the
   * call the same way and records it, so the log has it; the client gets this refusal.
   */
  keyRefusal?: ConnectError;
  /** Pass to every service call: it carries the client's credential and region. */
  call: CallOptions;
  /** Authenticated keys (absent in tests that build a bare gateway). */
  keyCache?: KeyCache;
  /**
   * The request's one AbortController's signal, passed down to every service call (in process,
   * it is the handler's own signal, and the upstream request's): aborted when the client goes
   * away (reason CLIENT_GONE), or by `abort`.
   */
  signal: AbortSignal;
  /**
   * Ends the request's calls for a reason of the gateway's own (a stream deadline passed, a
   * stream was given up). Pass a shared reason: `abort()` without one builds a DOMException.
   */
  abort(reason: Error): void;
}

export type Handler = (ctx: RequestContext) => Promise<void>;

/**
 * The OpenAPI description of one method of a route (gateway/openapi/document.ts renders it).
 * `query` and `body` are built from the very lists and checkFields tables the handler
 * validates with, so the document cannot list a parameter or field the handler refuses.
 */
export interface OperationDoc {
  summary: string;
  /** The query parameters the handler accepts (the list it passes to checkQuery). */
  query?: readonly string[];
  /** Value rules of query parameters beyond paging's (JSON Schema), by name; a string otherwise. */
  queryRules?: Record<string, JsonSchema>;
  /** The JSON body's schema (specSchema of the handler's checkFields table). */
  body?: JsonSchema;
  /** The success status and what it carries. */
  status: number;
  /** The JSON success body's schema (declared beside its renderer); required for JSON routes. */
  response?: JsonSchema;
  description?: string;
  /**
   * "audio": the success body is an audio stream (speech), not JSON; "prometheus": metrics text;
   * "asset": a static script, style sheet or icon (the console's).
   */
  produces?: "json" | "audio" | "html" | "prometheus" | "asset";
}

export interface Route {
  pattern: string;
  access: Access;
  methods: Partial<Record<string, Handler>>;
  /** Its refused requests go in the request log: see RequestContext.keyRefusal. */
  logsKeyRefusals?: true;
  /** Per method: its OpenAPI description; a method without one fails the document's build. */
  docs?: Partial<Record<string, OperationDoc>>;
}
