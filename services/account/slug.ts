/** 1 to 64 lowercase letters, digits or inner hyphens (exported: the API document states it). */
export const SLUG_RE = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

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
    .slice(0, 64)
    .replace(/-+$/g, "");
}
