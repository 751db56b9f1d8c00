import { expect } from "chai";
import type { JsonResponse } from "./http.js";

/** A response body short enough to read in an assertion message. */
export function shown(res: JsonResponse): string {
  return JSON.stringify(res.body)?.slice(0, 800) ?? String(res.body);
}

/** No stack frames, file paths or internal class names in what a client reads. */
export function expectNoInternals(message: string): void {
  expect(message).not.to.match(/\n\s*at\s|\.[tj]s:\d+|node:internal|ConnectError|^\[[a-z_]+\]/);
}

/**
 * The one error shape every suite checks: exactly `{ error: { code, message } }`, code equal to
 * the status, a JSON content type, a message free of internals and (when given) matching `message`.
 */
export function expectError(res: JsonResponse, status: number, message?: RegExp): void {
  expect(res.status, shown(res)).to.equal(status);
  expect(res.headers.get("content-type")).to.match(/^application\/json/);
  expect(res.body).to.be.an("object");
  expect(Object.keys(res.body)).to.deep.equal(["error"]);
  expect(Object.keys(res.body.error).sort()).to.deep.equal(["code", "message"]);
  expect(res.body.error.code).to.equal(status);
  expect(res.body.error.message).to.be.a("string").that.is.not.empty;
  expectNoInternals(res.body.error.message);
  if (message) expect(res.body.error.message).to.match(message);
}

export function expectStatus(res: JsonResponse, status: number): void {
  expect(res.status, shown(res)).to.equal(status);
}
