import { invalidArgument } from "../platform/rpc/errors.js";
import { PAGE_LIMITS } from "./limits.js";

/** offset >= 0; limit 1..PAGE_LIMITS.max where 0 (unset) means PAGE_LIMITS.default. */
export function pageParams(offset: number, limit: number): { offset: number; limit: number } {
  if (!Number.isInteger(offset) || offset < 0)
    throw invalidArgument("offset must be an integer >= 0");
  if (limit === 0) return { offset, limit: PAGE_LIMITS.default };
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMITS.max) {
    throw invalidArgument(`limit must be an integer from 1 to ${PAGE_LIMITS.max}`);
  }
  return { offset, limit };
}

/** The request rule of an offset-paged list (platform/rpc/request-rules.ts): the same checks. */
export function page(req: { offset: number; limit: number }): void {
  pageParams(req.offset, req.limit);
}
