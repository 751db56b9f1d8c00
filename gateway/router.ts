import type { Handler, Route } from "./context.js";

interface Compiled {
  route: Route;
  segments: string[];
}

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
  private readonly compiled: Compiled[];

  constructor(routes: Route[]) {
    this.compiled = routes.map((route) => ({
      route,
      segments: route.pattern.split("/").filter(Boolean),
    }));
  }

  /**
   * `path` starts with "/". Empty segments ("/api//v1", a trailing "/") match
   * nothing, so no path reaches a route other than the one it spells.
   */
  match(method: string, path: string): Match {
    const parts = path.slice(1).split("/");
    let allow: string[] | undefined;
    for (const { route, segments } of this.compiled) {
      if (segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < segments.length && ok; i++) {
        const seg = segments[i] as string;
        const part = parts[i] as string;
        if (seg.startsWith(":")) {
          // An empty segment is no value: "/keys/" is not "/keys/:hash".
          if (part === "") {
            ok = false;
            break;
          }
          try {
            params[seg.slice(1)] = decodeURIComponent(part);
          } catch {
            ok = false;
          }
        } else ok = seg === part;
      }
      if (!ok) continue;
      const handler = route.methods[method];
      if (handler) return { kind: "found", route, handler, params };
      allow ??= Object.keys(route.methods);
    }
    return allow ? { kind: "method-not-allowed", allow } : { kind: "not-found" };
  }
}
