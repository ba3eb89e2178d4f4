// The route contract, the subpath `@antler/plugin-runtime/routes`: what a plugin that contributes HTTP routes to the
// gateway imports. It lives beside `AntlerClient` and `Principal` (which it uses) rather than in the gateway, so such
// a plugin installs neither the gateway nor what the gateway needs (hono, the MCP plugin). Only types come from the
// rest of the runtime, so loading this subpath loads this file alone (`antler config check` never loads the runtime).
import type { PluginContext, Token } from "@antler/kernel";
import type { z } from "zod";
import type { AntlerClient } from "./client/client.js";
import type { Principal } from "./run-context.js";

/** HTTP methods a contributed route may use. */
export type GatewayMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** What a contributed route's handler receives: the caller is already authenticated. */
export interface GatewayRequest<Body = unknown, Query = unknown> {
  /** Always a `user` principal: the internal principal is never reachable over HTTP. */
  readonly principal: Principal;
  /** `principal.userId`: scope every read and write by it, and answer 404 for anything another user owns. */
  readonly userId: string;
  /** The request's trace id (the `X-Trace-Id` the response carries). */
  readonly traceId: string;
  /** Path parameters (`/schedules/:id` → `params.id`), URL-decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** The query string parsed by the route's `query` schema (raw strings when it has none). */
  readonly query: Query;
  /** The JSON body parsed by the route's `body` schema (`undefined` when it has none). */
  readonly body: Body;
  /** Aborts when the client disconnects. */
  readonly signal: AbortSignal;
  /** The gateway's embedded client: the same runs, threads and stores the built-in routes use. */
  readonly client: AntlerClient;
  /** The raw request, for headers or bodies the schemas do not cover. */
  readonly request: Request;
  /**
   * Follows one of this user's runs through the gateway's run event log (`stream_bridge`), from any instance:
   * its events after `afterSeq` (default 0: from the start), live until its `end` or `error` event. Event `seq`s
   * are the ids of the native run stream (the `metadata` event is 1), so a seq is a resume point; `values` data
   * is the whole state. `null`: the run is over and nothing follows `afterSeq`. Throws the gateway's coded errors:
   * RUN_NOT_FOUND (404, also for another user's run), RUN_EVENTS_DISABLED (404), RUN_EVENTS_EXPIRED (410).
   */
  followRun(threadId: string, runId: string, options?: FollowRunOptions): Promise<AsyncGenerator<FollowedRunEvent> | null>;
}

export interface FollowRunOptions {
  /** The last seq the caller has; events after it follow. Default 0. */
  afterSeq?: number;
  /** Stops following (the generator returns). Default: the request's signal. */
  signal?: AbortSignal;
}

/**
 * One logged event of a run: `metadata` (seq 1: run, thread and trace ids), then the run's `StreamEvent`s by
 * their `type` (`values`, `messages-tuple`, `custom`, `end`), or `error` last (`{ code, message, run_id }`) when
 * it failed or was cancelled. An `error` with seq 0 is the log's own (events pruned, or the log incomplete).
 */
export interface FollowedRunEvent {
  seq: number;
  event: string;
  data: unknown;
}

/** A plain reply is sent as JSON (default status 200); a `Response` is sent as it is. */
export type GatewayReply = Response | { status?: number; body?: unknown; headers?: Record<string, string> };

/** What every gateway error body holds under `error`: a stable code, what was wrong, and what to do. */
export interface GatewayErrorFields {
  code: string;
  message: string;
  hint?: string;
  where?: string;
  details?: Record<string, unknown>;
}

/**
 * A contributed route's error in the gateway's own shape, `{ error: { code, message, hint?, where?, details? } }`,
 * so clients read every route's failures one way. Example:
 * `return gatewayErrorReply(404, { code: "ANTLER_ERR_REPORT_NOT_FOUND", message: "no report for this run", hint: "..." })`.
 */
export function gatewayErrorReply(status: number, error: GatewayErrorFields): GatewayReply {
  return { status, body: { error } };
}

/** One route contributed by another plugin. Build it with `defineGatewayRoute` to keep the body type. */
export interface GatewayRoute {
  readonly method: GatewayMethod;
  /** Path under `/api` (or at the root with `mount: "root"`), Hono syntax: `/schedules/:id/trigger`. Must start with `/`. */
  readonly path: string;
  /**
   * `api` (default): served at `/api<path>`. `root`: served at `<path>` itself, for endpoints other tools expect at a
   * fixed place (a Prometheus scrape at `/metrics`); a root path may not start with `/api` or shadow a gateway route.
   */
  readonly mount?: "api" | "root";
  /**
   * `gateway` (default): the gateway's API-key auth, as for every `/api` route. `none` (root routes only): the
   * gateway does not authenticate, the handler must (it has `request`); `principal.userId` is then `""`, which
   * every store refuses, so an unauthenticated route can never act as a user.
   */
  readonly auth?: "gateway" | "none";
  /** One line for `GET /api` (the route index). */
  readonly summary?: string;
  /** Validates the JSON body; a mismatch is a 400 naming the field. */
  readonly body?: z.ZodType;
  /** Validates the query string (values are strings; use `z.coerce` for numbers). */
  readonly query?: z.ZodType;
  handler(request: GatewayRequest): GatewayReply | Promise<GatewayReply>;
}

/**
 * Background work that runs while the gateway serves (a scheduler's poller, an embedded worker). Called once the
 * server listens; the function it returns is awaited at shutdown, before live runs are cancelled.
 */
export type GatewayServeHook = (client: AntlerClient) => void | (() => Promise<void> | void) | Promise<void | (() => Promise<void> | void)>;

/**
 * Wraps the handling of every request (after its trace scope is bound, before auth and routing): for ambient
 * context that must surround the handler, such as a tracing plugin's parent span from an incoming `traceparent`.
 * It must call `next()` exactly once and should not throw.
 */
export type GatewayRequestWrapper = (request: Request, next: () => Promise<void>) => Promise<void>;

/** Everything one plugin adds to the gateway. */
export interface GatewayRouteContribution {
  readonly routes: readonly GatewayRoute[];
  readonly onServe?: GatewayServeHook | undefined;
  readonly aroundRequest?: GatewayRequestWrapper | undefined;
}

export interface GatewayRouteDefinition<B extends z.ZodType | undefined, Q extends z.ZodType | undefined> {
  method: GatewayMethod;
  path: string;
  mount?: "api" | "root";
  auth?: "gateway" | "none";
  summary?: string;
  body?: B;
  query?: Q;
  handler(
    request: GatewayRequest<B extends z.ZodType ? z.output<B> : undefined, Q extends z.ZodType ? z.output<Q> : Record<string, string>>,
  ): GatewayReply | Promise<GatewayReply>;
}

/** Declares a route with its body and query types inferred from the schemas. */
export function defineGatewayRoute<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(
  route: GatewayRouteDefinition<B, Q>,
): GatewayRoute {
  return Object.freeze({ ...route }) as unknown as GatewayRoute;
}

const ROUTES_TOKEN_PREFIX = "plugin-gateway.routes:";

/**
 * The DI token under which plugin `pluginName` contributes routes. The key is a registry symbol, so the
 * gateway finds every loaded plugin's contribution by name (and duplicate copies of this package agree). The
 * symbol keeps the name it had when the contract lived in `@antler/plugin-gateway/routes`, so a plugin built
 * against that older home and a gateway reading this one still find each other.
 */
export function gatewayRoutesToken(pluginName: string): Token<GatewayRouteContribution> {
  return Object.freeze({ key: Symbol.for(`@antler/plugin-gateway/routes:${pluginName}`), name: `${ROUTES_TOKEN_PREFIX}${pluginName}` });
}

/**
 * Contributes routes from a plugin's `setup`. They are mounted under `/api` behind the gateway's auth and
 * trace middleware when `antler serve` starts; without the gateway plugin they are simply never mounted, so
 * a plugin can call this unconditionally and needs no `dependsOn` on the gateway.
 */
export function provideGatewayRoutes(
  ctx: Pick<PluginContext<unknown>, "provide" | "plugin">,
  contribution: GatewayRouteContribution,
): void {
  ctx.provide(gatewayRoutesToken(ctx.plugin.name), {
    useValue: Object.freeze({ routes: [...contribution.routes], onServe: contribution.onServe, aroundRequest: contribution.aroundRequest }),
  });
}
