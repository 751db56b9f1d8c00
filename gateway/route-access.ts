import type { DescMethod } from "@bufbuild/protobuf";
import { rpcAccess } from "../domain/auth/caller-auth.js";
import type { Access } from "./context.js";

/**
 * A route's access, read from the RPCs its handlers call: the proto's `railgate.common.v1.access`
 * option is the one statement of who may call what (domain/auth/caller-auth.ts reads the same
 * option for every call), so the gateway's check before the body is read cannot drift from the
 * service's. Throws when the module loads if the RPCs disagree (one route, one access) or if one
 * is for gateways only: no public route may call such an RPC.
 */
export function accessOf(first: DescMethod, ...rest: DescMethod[]): Access {
  const access = rpcAccess(first);
  if (access === "gateway")
    throw new Error(`${first.parent.typeName}.${first.name} is for gateways: no route may call it`);
  for (const method of rest) {
    const other = rpcAccess(method);
    if (other !== access)
      throw new Error(
        `one route calls ${first.parent.typeName}.${first.name} (${access}) and ` +
          `${method.parent.typeName}.${method.name} (${other}): split the route or align the protos`,
      );
  }
  return access;
}

/** Routes that call no RPC (the console's and the reference's static pages): anyone. */
export const STATIC_PAGE: Access = "public";
