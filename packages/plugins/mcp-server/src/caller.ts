import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";

/** Who an MCP request acts for: every read and write of the request is scoped by `userId`. */
export interface McpCaller {
  userId: string;
  /** The API key's role (authorization), when it has one. */
  role?: string | undefined;
  /** The HTTP request's trace id; over stdio none, and each call gets its own. */
  traceId?: string | undefined;
}

export type McpRequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The key under `authInfo.extra` where the gateway route puts the authenticated caller of each HTTP request. */
export const CALLER_KEY = "antler_caller";

/**
 * The caller of one request: over HTTP the gateway's principal of that very request (handed to the transport as
 * `authInfo`), so a session can never act for anyone else; over stdio the configured user.
 */
export function callerOf(extra: McpRequestExtra, fallback: McpCaller): McpCaller {
  const carried = extra.authInfo?.extra?.[CALLER_KEY] as McpCaller | undefined;
  return carried ?? fallback;
}
