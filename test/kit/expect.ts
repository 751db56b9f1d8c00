import { Code, ConnectError } from "@connectrpc/connect";
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
 * Nothing of the inside in a message a client reads about a failure (it would help an attacker): no address
 * (IPv4/IPv6 with a port, a host:port), no path, no socket or client library error code
 * (ECONNREFUSED, ENOTFOUND, UND_ERR_...), no grpc-js status text (remote_addr, "Last error"),
 * no stack, on top of expectNoInternals.
 */
export function expectNoLeaks(message: string): void {
  expectNoInternals(message);
  expect(message).not.to.match(/\b\d{1,3}(\.\d{1,3}){3}\b/, "an IPv4 address");
  expect(message).not.to.match(/\[[0-9a-f:]+\]|::1\b/i, "an IPv6 address");
  expect(message).not.to.match(/\b[\w.-]+:\d{2,5}\b/, "a host:port");
  expect(message).not.to.match(/\bE[A-Z]{3,}\b|\bUND_ERR|\bEAI_|\bERR_[A-Z_]+/, "an error code");
  expect(message).not.to.match(/(^|\s)\/[\w.-]+\/|[A-Z]:\\/, "a path");
  expect(message).not.to.match(/remote_addr|Last error|LB pick|getaddrinfo|socket hang up/i);
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

/** `fn` throws INVALID_ARGUMENT with exactly `message` (a string) or one matching it. */
export function expectInvalidArgument(fn: () => unknown, message: string | RegExp): void {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ConnectError);
    expect((err as ConnectError).code).to.equal(Code.InvalidArgument);
    if (typeof message === "string") expect((err as ConnectError).rawMessage).to.equal(message);
    else expect((err as ConnectError).rawMessage).to.match(message);
    return;
  }
  expect.fail(`expected ${message} to be refused`);
}
