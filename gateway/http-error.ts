import { ConnectError } from "@connectrpc/connect";
import { httpStatusOf, RETRY_AFTER_HEADER } from "../services/common/errors.js";

/** An error the gateway answers directly, with its HTTP status. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface ErrorReply {
  status: number;
  message: string;
  headers: Record<string, string>;
}

/** Every error becomes `{ error: { code, message } }`; unexpected ones say nothing internal. */
export function errorReply(err: unknown): ErrorReply {
  if (err instanceof HttpError)
    return { status: err.status, message: err.message, headers: err.headers };
  if (err instanceof ConnectError) {
    const status = httpStatusOf(err);
    const headers: Record<string, string> = {};
    const retryAfter = err.metadata.get(RETRY_AFTER_HEADER);
    if (retryAfter) headers["retry-after"] = retryAfter;
    // Internal and unknown codes carry no detail worth leaking.
    const message =
      status >= 500 && status !== 502 && status !== 503 && status !== 524 && status !== 529
        ? "Internal server error"
        : err.rawMessage;
    return { status, message, headers };
  }
  return { status: 500, message: "Internal server error", headers: {} };
}
