import type { Handler, Route } from "./context.js";

interface Compiled {
  route: Route;
  /** Index and text of each static segment, checked before any parameter is decoded. */
  statics: [number, string][];
  /** Index and name of each parameter segment. */
  names: [number, string][];
}

const NONE: Compiled[] = [];

export type Match =
  | { kind: "found"; route: Route; handler: Handler; params: Record<string, string> }
  | { kind: "method-not-allowed"; allow: string[] }
  | { kind: "not-found" };

/**
 * Matches "/a/:id/b" patterns segment by segment, in the order given, so
 * static routes listed first win over parameters ("/guardrails/assignments/keys"
 * before "/guardrails/:id").
 */
export class Router {
  /** The routes by their number of segments, each list in the order given. */
  private readonly bySegments = new Map<number, Compiled[]>();

  constructor(routes: Route[]) {
    for (const route of routes) {
      const segments = route.pattern.split("/").filter(Boolean);
      const compiled: Compiled = { route, statics: [], names: [] };
      segments.forEach((seg, i) => {
        if (seg.startsWith(":")) compiled.names.push([i, seg.slice(1)]);
        else compiled.statics.push([i, seg]);
      });
      const list = this.bySegments.get(segments.length) ?? [];
      list.push(compiled);
      this.bySegments.set(segments.length, list);
    }
  }

  /**
   * `path` starts with "/". Empty segments ("/api//v1", a trailing "/") match
   * nothing, so no path reaches a route other than the one it spells.
   */
  match(method: string, path: string): Match {
    const parts = path.slice(1).split("/");
    let allow: string[] | undefined;
    for (const compiled of this.bySegments.get(parts.length) ?? NONE) {
      const params = paramsOf(compiled, parts);
      if (!params) continue;
      const route = compiled.route;
      const handler = route.methods[method];
      if (handler) return { kind: "found", route, handler, params };
      allow ??= Object.keys(route.methods);
    }
    return allow ? { kind: "method-not-allowed", allow } : { kind: "not-found" };
  }
}

/** The route's parameters in `parts` (as many as its segments), or none when it does not match. */
function paramsOf(compiled: Compiled, parts: string[]): Record<string, string> | undefined {
  for (const [i, seg] of compiled.statics) if (parts[i] !== seg) return undefined;
  const params: Record<string, string> = {};
  for (const [i, name] of compiled.names) {
    const part = parts[i] as string;
    // An empty segment is no value: "/keys/" is not "/keys/:hash".
    if (part === "") return undefined;
    try {
      params[name] = decodeURIComponent(part);
    } catch {
      return undefined;
    }
  }
  return params;
}
