import type { MiddlewareHandler } from "hono";
import type { GatewayEnv } from "./env.js";
import { GatewayErrorCodes, HttpError } from "./errors.js";

interface RoutePattern {
  readonly regex: RegExp;
  /** Literal path segments: the more, the more specific (`/runs/wait` beats `/runs/:run`). */
  readonly literals: number;
  readonly methods: Set<string>;
}

/** A Hono path (`/api/threads/:id/artifacts/*`) as a whole-path regular expression. */
function patternOf(path: string): { regex: RegExp; literals: number } {
  let literals = 0;
  const parts = path.split("/").map((segment) => {
    if (segment === "*") return ".*";
    if (segment.startsWith(":")) return "[^/]+";
    if (segment !== "") literals += 1;
    return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  });
  return { regex: new RegExp(`^${parts.join("/")}/?$`), literals };
}

/**
 * Answers 405 with `Allow` when the path is served but not with this method. The routes are those registered
 * on the app (`ALL` middleware excluded), read once when the first request arrives; among the patterns that
 * match the path, only the most specific ones count, so `GET /runs/wait` is refused rather than routed to
 * `GET /runs/:run` as a run called "wait".
 */
export function methodGuard(routes: () => ReadonlyArray<{ method: string; path: string }>): MiddlewareHandler<GatewayEnv> {
  let patterns: RoutePattern[] | undefined;
  const build = () => {
    const byPath = new Map<string, RoutePattern>();
    for (const route of routes()) {
      if (route.method === "ALL") continue;
      const known = byPath.get(route.path);
      if (known) known.methods.add(route.method);
      else byPath.set(route.path, { ...patternOf(route.path), methods: new Set([route.method]) });
    }
    return [...byPath.values()];
  };
  return async (c, next) => {
    patterns ??= build();
    const path = new URL(c.req.url).pathname;
    const matching = patterns.filter((p) => p.regex.test(path));
    if (matching.length === 0) return next();
    const best = Math.max(...matching.map((p) => p.literals));
    const allowed = new Set<string>();
    for (const p of matching) if (p.literals === best) for (const m of p.methods) allowed.add(m);
    if (allowed.has("GET")) allowed.add("HEAD");
    const method = c.req.method;
    if (allowed.has(method) || method === "OPTIONS") return next();
    const allow = [...allowed].sort().join(", ");
    throw new HttpError(
      405,
      GatewayErrorCodes.METHOD_NOT_ALLOWED,
      `${method} is not allowed on ${path}; it answers ${allow}`,
      "Use one of the methods in the Allow header.",
      undefined,
      { Allow: allow },
    );
  };
}
