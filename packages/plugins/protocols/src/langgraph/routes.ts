import type { GatewayRoute } from "@antler/plugin-runtime/routes";
import { assistantRoutes } from "./assistants.js";
import type { LangGraphRouteOptions } from "./http.js";
import { runRoutes } from "./runs.js";
import { threadRoutes } from "./threads.js";

export type { LangGraphRouteOptions } from "./http.js";

/** The LangGraph Agent Server API under `prefix`: assistants, threads and runs. */
export function langGraphRoutes(options: LangGraphRouteOptions): GatewayRoute[] {
  return [...assistantRoutes(options), ...threadRoutes(options), ...runRoutes(options)];
}
