// What every LangGraph route shares: its options, how it is declared, and reading its query and JSON values.
import { defineGatewayRoute, type GatewayReply, type GatewayRequest, type GatewayRoute } from "@antler/plugin-runtime/routes";
import { z } from "zod";
import { withLangGraphErrors } from "./errors.js";

export interface LangGraphRouteOptions {
  /** Where the routes live, e.g. `/langgraph`: the SDK's `apiUrl` is the gateway's origin plus this prefix. */
  prefix: string;
  /** A comment line this often keeps proxies from closing a quiet stream. */
  keepAliveMs: number;
}

/** A LangGraph route's request: the body is any JSON (the handler validates it), the query raw strings. */
export type LangGraphRequest = GatewayRequest<unknown, Record<string, string | undefined>>;

/**
 * One LangGraph route at `path` (already prefixed): mounted at the root behind the gateway's auth, errors answered
 * by `withLangGraphErrors`. A POST or PATCH takes any JSON, which the handler validates, so a mismatch is
 * LangGraph's 422 rather than the gateway's 400 (the gateway's size and depth limits still apply).
 */
export function langGraphRoute(
  method: "GET" | "POST" | "PATCH" | "DELETE",
  path: string,
  summary: string,
  handle: (req: LangGraphRequest) => Promise<GatewayReply>,
): GatewayRoute {
  return defineGatewayRoute({
    method,
    path,
    mount: "root",
    summary: `LangGraph: ${summary}`,
    ...(method === "POST" || method === "PATCH" ? { body: z.unknown() } : {}),
    handler: (req) => withLangGraphErrors(() => handle(req as LangGraphRequest)),
  });
}

/** The query string's values for `name`, repeated or not (`?select=a&select=b`). */
export function queryValues(req: GatewayRequest, name: string): string[] {
  return new URL(req.request.url).searchParams.getAll(name);
}

/** A boolean query flag: `1` or `true` is on. */
export function queryFlag(req: LangGraphRequest, name: string): boolean {
  const value = req.query[name];
  return value === "1" || value === "true";
}

/** The paging and order fields of LangGraph's search bodies (`assistants.search`, `threads.search`). */
export const searchPageFields = {
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_order: z.enum(["asc", "desc"]).optional(),
};

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
