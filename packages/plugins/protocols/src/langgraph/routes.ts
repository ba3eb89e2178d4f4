import type { GatewayRoute } from "@antler/plugin-gateway/routes";
import { assistantRoutes } from "./assistants.js";
import { runRoutes } from "./runs.js";
import { threadRoutes } from "./threads.js";

export interface LangGraphRouteOptions {
  /** Where the routes live, e.g. `/langgraph`: the SDK's `apiUrl` is the gateway's origin plus this prefix. */
  prefix: string;
  /** A comment line this often keeps proxies from closing a quiet stream. */
  keepAliveMs: number;
}

/** The LangGraph Agent Server API under `prefix`: assistants, threads and runs. */
export function langGraphRoutes(options: LangGraphRouteOptions): GatewayRoute[] {
  return [...assistantRoutes(options), ...threadRoutes(options), ...runRoutes(options)];
}
