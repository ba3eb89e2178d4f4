export { createGatewayApp, type GatewayAppOptions, type GatewayEnv } from "./app.js";
export { SESSION_COOKIE, SESSION_CSRF_HEADER, SessionStore } from "./auth.js";
export { backgroundTasksResponseSchema } from "./background-tasks-schema.js";
export {
  apiKeySchema,
  type GatewayConfig,
  type GatewayConfigInput,
  gatewayAuthSchema,
  gatewayConfigSchema,
} from "./config.js";
export { type ErrorBody, GatewayErrorCodes, HttpError, statusForAntlerError } from "./errors.js";
export { clientOptionsOf, default, PLUGIN_NAME, runLeasesOf } from "./plugin.js";
export {
  CALLER_DATA_LIMITS,
  gatewayRunRequestSchema,
  gatewayThreadCreateSchema,
  MAX_JSON_DEPTH,
} from "./request-limits.js";
export {
  defineGatewayRoute,
  type FollowedRunEvent,
  type FollowRunOptions,
  type GatewayErrorFields,
  type GatewayMethod,
  type GatewayReply,
  type GatewayRequest,
  type GatewayRequestWrapper,
  type GatewayRoute,
  type GatewayRouteContribution,
  type GatewayRouteDefinition,
  type GatewayServeHook,
  gatewayErrorReply,
  gatewayRoutesToken,
  provideGatewayRoutes,
} from "./routes.js";
export {
  collectContributedRoutes,
  collectRequestWrappers,
  collectServeHooks,
  parseGatewayConfig,
  type RunningGateway,
  type StartGatewayOptions,
  startGateway,
} from "./server.js";
export { GATEWAY_SSE_CHANNEL, type GatewaySseEvent, sseFrame } from "./sse.js";
export {
  applyMessagesPatch,
  applyValuesFrame,
  applyValuesPatch,
  diffMessages,
  diffValues,
  isValuesFrame,
  type MessagesOp,
  type MessagesPatch,
  VALUES_PATCH_MISMATCH,
  type ValuesFrame,
  type ValuesMessage,
  type ValuesPatch,
  ValuesPatchMismatchError,
  type ValuesState,
} from "./values-delta.js";
export { valuesFrameSchema } from "./values-frame-schema.js";
