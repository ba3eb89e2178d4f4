import { definePlugin, type MiddlewareEntry, type MiddlewareSpec } from "@antler/kernel";
import { provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { type OtelConfig, otelConfigSchema, PLUGIN_NAME } from "./config.js";
import type { OtelTracing } from "./tracing.js";

/** What the plugin exposes to its host (tests and the bench flush through it). */
export interface OtelHandle {
  /** The running tracing, from `kernel.start()` until `kernel.close()`; undefined outside that. */
  readonly tracing: OtelTracing | undefined;
}

/** The middleware that opens model-call and tool-call spans; outermost (`stage: "first"`), so it times the whole call. */
function spanMiddleware(handle: { tracing: OtelTracing | undefined }): MiddlewareSpec {
  return {
    name: "spans",
    wrapModelCall: (request, handler) => (handle.tracing ? handle.tracing.wrapModelCall(request, handler) : handler(request)),
    wrapToolCall: (request, handler) => (handle.tracing ? handle.tracing.wrapToolCall(request, handler) : handler(request)),
  };
}

/** `entry` with its wrap hooks timed as spans (when sampled); node-style hooks come from the kernel's channel. */
function withHookSpans(entry: MiddlewareEntry, handle: { tracing: OtelTracing | undefined }): MiddlewareEntry {
  const { spec } = entry;
  const wrapModelCall = spec.wrapModelCall;
  const wrapToolCall = spec.wrapToolCall;
  if (!wrapModelCall && !wrapToolCall) return entry;
  const timed: MiddlewareSpec = {
    ...spec,
    ...(wrapModelCall
      ? {
          wrapModelCall: (request, handler) => {
            const call = () => wrapModelCall.call(spec, request, handler);
            return handle.tracing ? handle.tracing.hookSpan(entry, "wrapModelCall", contextOf(request), call) : call();
          },
        }
      : {}),
    ...(wrapToolCall
      ? {
          wrapToolCall: (request, handler) => {
            const call = () => wrapToolCall.call(spec, request, handler);
            return handle.tracing ? handle.tracing.hookSpan(entry, "wrapToolCall", contextOf(request), call) : call();
          },
        }
      : {}),
  };
  return { ...entry, spec: timed };
}

function contextOf(request: { runtime?: { context?: unknown } }): Record<string, unknown> | undefined {
  return request.runtime?.context as Record<string, unknown> | undefined;
}

/**
 * Builds the plugin. Config comes from the plugin's `config:` block; `onStart` receives the handle once tracing
 * runs (the default export passes nothing).
 */
export function otelPlugin(options: { onStart?: (handle: OtelHandle) => void } = {}) {
  return definePlugin({
    name: PLUGIN_NAME,
    version: "0.1.0",
    kernel: "^0.1.0",
    description:
      "OpenTelemetry traces over OTLP/HTTP: a span per run, model call, tool call and (sampled) middleware hook; W3C traceparent out and in.",
    configSchema: otelConfigSchema,
    setup(ctx) {
      const config: OtelConfig = ctx.config;
      const handle: { tracing: OtelTracing | undefined } = { tracing: undefined };
      // The SDK loads at start, not at boot: `antler plugins list` and `config check` never pay for it.
      ctx.hooks.start.tap(async () => {
        const { OtelTracing } = await import("./tracing.js");
        handle.tracing = new OtelTracing(config, ctx.logger);
        options.onStart?.(handle);
      });
      ctx.hooks.stop.tap(async () => {
        const tracing = handle.tracing;
        handle.tracing = undefined;
        await tracing?.shutdown();
      });
      // First in their stage, so a run's span is open before other plugins' runStart work and closed after their runEnd.
      ctx.hooks.runStart.tap((run) => handle.tracing?.runStarted(run), { stage: "first" });
      ctx.hooks.runError.tap((run, error) => handle.tracing?.runFailed(run, error), { stage: "first" });
      ctx.hooks.runEnd.tap((run, outcome) => handle.tracing?.runEnded(run, outcome), { stage: "last" });
      ctx.middleware.add(spanMiddleware(handle), { stage: "first" });
      // Hook spans on demand: only then is every other middleware's wrap hook wrapped (at 0 nothing is).
      if (config.middleware_span_ratio > 0) {
        ctx.hooks.assembleMiddleware.tap(
          (entries) => entries.map((entry) => (entry.plugin === PLUGIN_NAME ? entry : withHookSpans(entry, handle))),
          {
            stage: "last",
          },
        );
      }
      provideGatewayRoutes(ctx, {
        routes: [],
        aroundRequest: (request, next) => (handle.tracing ? handle.tracing.aroundRequest(request, next) : next()),
      });
    },
  });
}

export default otelPlugin();
