// The subpath `@antler/plugin-gateway/routes`, kept so plugins written against it still build. The route contract
// now lives in `@antler/plugin-runtime/routes`, which a route plugin can install without the gateway (and without
// hono or the MCP plugin the gateway needs); every name here is that module's, under its old address.
import type * as contract from "@antler/plugin-runtime/routes";
import {
  defineGatewayRoute as defineRoute,
  gatewayErrorReply as errorReply,
  provideGatewayRoutes as provideRoutes,
  gatewayRoutesToken as routesToken,
} from "@antler/plugin-runtime/routes";
import type { z } from "zod";

/** @deprecated Import `GatewayMethod` from `@antler/plugin-runtime/routes`. */
export type GatewayMethod = contract.GatewayMethod;
/** @deprecated Import `GatewayRequest` from `@antler/plugin-runtime/routes`. */
export type GatewayRequest<Body = unknown, Query = unknown> = contract.GatewayRequest<Body, Query>;
/** @deprecated Import `FollowRunOptions` from `@antler/plugin-runtime/routes`. */
export type FollowRunOptions = contract.FollowRunOptions;
/** @deprecated Import `FollowedRunEvent` from `@antler/plugin-runtime/routes`. */
export type FollowedRunEvent = contract.FollowedRunEvent;
/** @deprecated Import `GatewayReply` from `@antler/plugin-runtime/routes`. */
export type GatewayReply = contract.GatewayReply;
/** @deprecated Import `GatewayErrorFields` from `@antler/plugin-runtime/routes`. */
export type GatewayErrorFields = contract.GatewayErrorFields;
/** @deprecated Import `GatewayRoute` from `@antler/plugin-runtime/routes`. */
export type GatewayRoute = contract.GatewayRoute;
/** @deprecated Import `GatewayServeHook` from `@antler/plugin-runtime/routes`. */
export type GatewayServeHook = contract.GatewayServeHook;
/** @deprecated Import `GatewayRequestWrapper` from `@antler/plugin-runtime/routes`. */
export type GatewayRequestWrapper = contract.GatewayRequestWrapper;
/** @deprecated Import `GatewayRouteContribution` from `@antler/plugin-runtime/routes`. */
export type GatewayRouteContribution = contract.GatewayRouteContribution;
/** @deprecated Import `GatewayRouteDefinition` from `@antler/plugin-runtime/routes`. */
export type GatewayRouteDefinition<B extends z.ZodType | undefined, Q extends z.ZodType | undefined> = contract.GatewayRouteDefinition<
  B,
  Q
>;

/** @deprecated Import `gatewayErrorReply` from `@antler/plugin-runtime/routes`. */
export const gatewayErrorReply: typeof errorReply = errorReply;
/** @deprecated Import `defineGatewayRoute` from `@antler/plugin-runtime/routes`. */
export const defineGatewayRoute: typeof defineRoute = defineRoute;
/** @deprecated Import `gatewayRoutesToken` from `@antler/plugin-runtime/routes`. */
export const gatewayRoutesToken: typeof routesToken = routesToken;
/** @deprecated Import `provideGatewayRoutes` from `@antler/plugin-runtime/routes`. */
export const provideGatewayRoutes: typeof provideRoutes = provideRoutes;
