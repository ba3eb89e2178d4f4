import type { GatewayRoute } from "@antler/plugin-gateway/routes";

export interface AgUiRouteOptions {
  /** Where the routes live, e.g. `/ag-ui`: `HttpAgent`'s `url` is the gateway's origin plus this prefix. */
  prefix: string;
  /** A comment line this often keeps proxies from closing a quiet stream. */
  keepAliveMs: number;
}

/** AG-UI's run endpoint under `prefix`. (Skeleton: filled in by the AG-UI slice.) */
export function agUiRoutes(_options: AgUiRouteOptions): GatewayRoute[] {
  return [];
}
