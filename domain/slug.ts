import { ACCOUNT_LIMITS } from "./limits.js";

/** 1 to ACCOUNT_LIMITS.slugMax lowercase letters, digits or inner hyphens (exported: the API document states it). */
export const SLUG_RE = new RegExp(
  `^[a-z0-9](?:[a-z0-9-]{0,${ACCOUNT_LIMITS.slugMax - 2}}[a-z0-9])?$`,
);

export function isSlug(s: string): boolean {
  return SLUG_RE.test(s);
}

/** A URL-safe slug from a display name; may be empty when the name has no usable characters. */
export function slugify(name: string): string {
  return name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, ACCOUNT_LIMITS.slugMax)
    .replace(/-+$/g, "");
}
