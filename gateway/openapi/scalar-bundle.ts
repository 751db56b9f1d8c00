import { readFileSync } from "node:fs";

/**
 * Scalar's API reference as its standalone browser bundle, from the pinned npm dependency
 * (@scalar/api-reference, an exact version in package.json): served by the gateway itself, so
 * /docs runs no script from elsewhere and works offline. Read once, at start-up: the file is
 * part of the installation, not content that changes while running.
 */
const entry = import.meta.resolve("@scalar/api-reference");
const packageDir = new URL("../", entry);

function read(relative: string): Buffer {
  return readFileSync(new URL(relative, packageDir));
}

/** The version installed: it names the bundle's URL, so a browser may cache it for good. */
export const SCALAR_VERSION: string = JSON.parse(read("package.json").toString("utf8")).version;

/** The standalone bundle (an IIFE that defines window.Scalar.createApiReference). */
export const SCALAR_BUNDLE: Buffer = read("dist/browser/standalone.js");
