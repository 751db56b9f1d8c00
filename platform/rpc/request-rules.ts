import type { DescService, MessageShape } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { invalidArgument } from "./errors.js";

/**
 * The way a service states its input rules: one rule per RPC, in one place
 * (services/<name>/request-rules.ts), run before the RPC's handler whoever
 * calls (the gateway, which only maps JSON to messages, or a plain gRPC
 * client), so both get the same INVALID_ARGUMENT with a message that names
 * the field and the rule. What needs the store (does the record exist) stays
 * with the handler.
 */

/** One rule per RPC: the type makes a new RPC without a rule a compile error. */
export type RequestRules<S extends DescService> = {
  [M in keyof S["method"]]: (req: MessageShape<S["method"][M]["input"]>) => void;
};

/** The rule of an RPC whose request has nothing to check. */
export function noRule(): void {}

export function fail(message: string): never {
  throw invalidArgument(message);
}

/** A cursor-paged list's page size: limit 0 is `limits.pageDefault`. */
export function cursorPageSize(
  limit: number,
  limits: { pageDefault: number; pageMax: number },
): number {
  return limit === 0 ? limits.pageDefault : limit;
}

/** A cursor-paged list's limit: 0 (the default) or 1..limits.pageMax. */
export function cursorPage(limit: number, limits: { pageDefault: number; pageMax: number }): void {
  const size = cursorPageSize(limit, limits);
  if (!Number.isInteger(size) || size < 1 || size > limits.pageMax)
    fail(`limit must be an integer from 1 to ${limits.pageMax}`);
}

/**
 * The service with its rules in front of every method: no handler runs on a
 * request its rule refuses, so a refused call changes nothing. A rule checks
 * one request message, so a method that takes a stream of them has no place
 * here (the wrapper refuses to build rather than let it through unchecked).
 */
export function withRequestRules<S extends DescService>(
  service: S,
  impl: ServiceImpl<S>,
  rules: RequestRules<S>,
): ServiceImpl<S> {
  const checked: Record<string, unknown> = {};
  for (const method of Object.values(service.method)) {
    const name = method.localName as keyof S["method"] & string;
    const rule = rules[name] as (req: unknown) => void;
    const handler = (impl[name] as (req: unknown, ctx: HandlerContext) => unknown).bind(impl);
    if (method.methodKind === "unary") {
      checked[name] = async (req: unknown, ctx: HandlerContext) => {
        rule(req);
        return handler(req, ctx);
      };
    } else if (method.methodKind === "server_streaming") {
      checked[name] = async function* (req: unknown, ctx: HandlerContext) {
        rule(req);
        yield* handler(req, ctx) as AsyncIterable<unknown>;
      };
    } else {
      throw new Error(`${service.typeName}.${method.name} takes a stream: no request rule fits it`);
    }
  }
  return checked as ServiceImpl<S>;
}
