import { invalidArgument } from "./errors.js";

export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 100;

/** offset >= 0; limit 1..100 where 0 (unset) means the default of 50. */
export function pageParams(offset: number, limit: number): { offset: number; limit: number } {
  if (!Number.isInteger(offset) || offset < 0)
    throw invalidArgument("offset must be an integer >= 0");
  if (limit === 0) return { offset, limit: PAGE_LIMIT_DEFAULT };
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT_MAX) {
    throw invalidArgument(`limit must be an integer from 1 to ${PAGE_LIMIT_MAX}`);
  }
  return { offset, limit };
}
