import { Code, type ConnectError } from "@connectrpc/connect";
import { ErrorReason } from "../gen/railgate/common/v1/error_info_pb.js";
import { withReason } from "../platform/rpc/errors.js";

/** What a client is told to wait before retrying while the store is down. */
export const STORE_RETRY_AFTER_SECONDS = 2;

/** Node socket errors that mean a server (Redis, PostgreSQL) cannot be reached at all. */
export const NETWORK_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/** ioredis' own words for a command that never got an answer (it has no error classes for them). */
const CLIENT_MESSAGES =
  /^(Command timed out|Connection is closed|Stream isn't writeable|None of startup nodes is available|Failed to refresh slots cache|Cluster isn't ready|Too many Cluster redirections)/;

/** Replies of a Redis that is up but cannot serve yet (loading, failing over). */
const SERVER_NOT_READY = /^(LOADING|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|BUSY )/;

/**
 * True when an error says the store did not answer (down, frozen, unreachable,
 * not ready), as opposed to a bug or a refused command: those stay 500s.
 */
export function isStoreUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === "MaxRetriesPerRequestError" || err.name === "ClusterAllFailedError") return true;
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== undefined && NETWORK_CODES.has(code)) return true;
  if (err.name === "ReplyError") return SERVER_NOT_READY.test(err.message);
  return CLIENT_MESSAGES.test(err.message);
}

/**
 * 503 with Retry-After: the request may well succeed once the store is back. The client's
 * message says only that; what the client library said (an address, a Redis error) is the
 * `cause`, logged with the request id by the service that answers (platform/rpc/grpc-server.ts).
 */
export function storeUnavailable(cause?: unknown): ConnectError {
  return withReason(
    Code.Unavailable,
    ErrorReason.STORE_UNAVAILABLE,
    "Service unavailable: the data store is not answering; retry shortly",
    STORE_RETRY_AFTER_SECONDS,
    cause,
  );
}

function translate(err: unknown): never {
  throw isStoreUnavailable(err) ? storeUnavailable(err) : err;
}

function isObject(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

/**
 * The one place where a store outage becomes a 503: every method of the store
 * that fails because the store did not answer throws `storeUnavailable()`
 * instead of the client library's error, whichever service called it.
 */
export function guardStore<T extends object>(store: T): T {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        try {
          const result = value.apply(target, args);
          if (result instanceof Promise) return result.catch(translate);
          // A part of the store it opens (policy documents, audio clips) talks to the same
          // Redis: its outages are the store's, and answer the same 503.
          if (typeof prop === "string" && prop.startsWith("open") && isObject(result))
            return guardStore(result);
          return result;
        } catch (err) {
          return translate(err);
        }
      };
    },
  });
}
