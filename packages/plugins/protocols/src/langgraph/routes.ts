import type { GatewayRoute } from "@antler/plugin-gateway/routes";
import { runRoutes } from "./runs.js";

export interface LangGraphRouteOptions {
  /** Where the routes live, e.g. `/langgraph`: the SDK's `apiUrl` is the gateway's origin plus this prefix. */
  prefix: string;
  /** A comment line this often keeps proxies from closing a quiet stream. */
  keepAliveMs: number;
}

/** The LangGraph Agent Server API under `prefix`. (Skeleton: filled in by the LangGraph slices.) */
export function langGraphRoutes(options: LangGraphRouteOptions): GatewayRoute[] {
  return [...runRoutes(options)];
}
