import { timingSafeEqual } from "node:crypto";
import { definePlugin } from "@antler/kernel";
import { defineGatewayRoute, provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import type { MetricsCollector } from "./collector.js";
import { type MetricsConfig, metricsConfigSchema, PLUGIN_NAME } from "./config.js";

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function unauthorized(message: string): Promise<Response> {
  // The gateway that serves this route has its error codes loaded already; the plugin entry does not load them.
  const { GatewayErrorCodes } = await import("@antler/plugin-gateway");
  return new Response(
    JSON.stringify({
      error: {
        code: GatewayErrorCodes.UNAUTHENTICATED,
        message,
        hint: "Send `Authorization: Bearer <token>` with the metrics plugin's auth.bearer_token (in Prometheus: `authorization: { credentials: ... }`).",
      },
    }),
    { status: 401, headers: { "content-type": "application/json", "www-authenticate": 'Bearer realm="antler-metrics"' } },
  );
}

/**
 * `@antler/plugin-metrics`: Prometheus metrics at `/metrics` on the gateway. Listed under `plugins:` it is on;
 * the collector (and prom-client) loads when the kernel starts.
 */
export default definePlugin({
  name: PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description:
    "Prometheus metrics on the gateway (/metrics): runs, latencies, tool calls, tokens, SSE streams, batch queue, scheduler firings.",
  configSchema: metricsConfigSchema,
  setup(ctx) {
    const config: MetricsConfig = ctx.config;
    let collector: MetricsCollector | undefined;
    ctx.hooks.start.tap(async () => {
      const { MetricsCollector } = await import("./collector.js");
      collector = new MetricsCollector(config);
    });
    ctx.hooks.stop.tap(() => {
      collector?.close();
      collector = undefined;
    });
    ctx.hooks.runStart.tap((run) => collector?.runStarted(run), { stage: "first" });
    ctx.hooks.runEnd.tap((run, outcome) => collector?.runEnded(run, outcome), { stage: "last" });
    ctx.middleware.add(
      {
        name: "metrics",
        wrapModelCall: (request, handler) => (collector ? collector.wrapModelCall(request, handler) : handler(request)),
        wrapToolCall: (request, handler) => (collector ? collector.wrapToolCall(request, handler) : handler(request)),
      },
      { stage: "first" },
    );
    const token = typeof config.auth === "object" ? config.auth.bearer_token : undefined;
    provideGatewayRoutes(ctx, {
      routes: [
        defineGatewayRoute({
          method: "GET",
          path: config.path,
          mount: "root",
          auth: config.auth === "api_keys" ? "gateway" : "none",
          summary: "Prometheus metrics (text exposition format).",
          async handler({ request, client }) {
            if (token !== undefined) {
              const given = request.headers
                .get("authorization")
                ?.match(/^Bearer\s+(.+)$/i)?.[1]
                ?.trim();
              if (!given) return unauthorized("scraping the metrics needs the metrics bearer token");
              if (!sameSecret(given, token)) return unauthorized("the metrics bearer token is not valid");
            }
            if (!collector)
              return { status: 503, body: { error: { code: "ANTLER_ERR_NOT_STARTED", message: "metrics are not collecting yet" } } };
            // Read at the scrape: pauses are in the database, not in any instance's memory.
            const paused = await client.countPausedRuns().catch(() => undefined);
            if (paused !== undefined) collector.pausedRuns.set(paused);
            const pending = await client.countPendingRuns().catch(() => undefined);
            if (pending !== undefined) collector.pendingRuns.set(pending);
            const oldest = await client.oldestPendingRunWaitMs().catch(() => undefined);
            if (oldest !== undefined) collector.oldestPendingSeconds.set(oldest / 1000);
            return new Response(await collector.registry.metrics(), {
              status: 200,
              headers: { "content-type": collector.registry.contentType },
            });
          },
        }),
      ],
    });
  },
});
