import type { Principal } from "@antler/kernel";

/** What the gateway's middleware puts on every request's context: the trace id and who is calling. */
export type GatewayEnv = { Variables: { traceId: string; principal: Principal } };
