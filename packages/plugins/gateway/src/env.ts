import type { Principal } from "@antler/plugin-runtime";
import type { HttpBindings } from "@hono/node-server";

/**
 * What the gateway's middleware puts on every request's context: the trace id and who is calling. `Bindings` are
 * the Node request and response when served by `startGateway` (absent under `app.request`).
 */
export type GatewayEnv = {
  Bindings: Partial<HttpBindings>;
  /** `authVia`: what proved who is calling (an API key, the browser session cookie, or `auth.mode: none`). */
  Variables: { traceId: string; principal: Principal; authVia: "key" | "session" | "none" };
};
