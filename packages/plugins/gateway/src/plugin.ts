import { AntlerError, definePlugin, ErrorCodes } from "@antler/kernel";
import type { AntlerClient, AntlerClientOptions } from "@antler/plugin-runtime";
import { type GatewayConfig, gatewayConfigSchema } from "./config.js";

export const PLUGIN_NAME = "@antler/plugin-gateway";

export default definePlugin({
  name: PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "HTTP gateway: REST and SSE runs API, trace headers, API-key auth with per-user scoping, plugin routes.",
  configSchema: gatewayConfigSchema,
  setup(ctx) {
    const config = ctx.config;
    const logger = ctx.logger;
    // `antler worker` executes runs (the ones it takes over) with the gateway's run options and run event log, so
    // a client following such a run through any gateway sees it go on. Same registry key as RUN_HOSTING_TOKEN.
    ctx.provide(
      { key: Symbol.for("@antler/plugin-runtime/run-hosting"), name: "plugin-runtime.run-hosting" },
      {
        useValue: Object.freeze({
          clientOptions: clientOptionsOf(config),
          async attach(client: AntlerClient) {
            const { openRunEventLog } = await import("./run-events/open.js");
            const log = await openRunEventLog(client, config, logger);
            if (!log) return async () => {};
            const detach = client.observeRuns(log);
            return async () => {
              detach();
              await log.close();
            };
          },
        }),
      },
    );
    ctx.commands.add({
      name: "serve",
      summary: "Serve the HTTP gateway until SIGINT/SIGTERM.",
      options: {
        port: {
          type: "integer",
          placeholder: "n",
          description: "Port to listen on, 0 for a free one; default: the plugin's config port (8001).",
        },
        host: { placeholder: "addr", description: "Address to listen on; default: the plugin's config host (127.0.0.1)." },
      },
      async run(_args, io) {
        const { port, host } = io.options;
        if (port !== undefined && (port < 0 || port > 65535)) {
          throw new AntlerError(ErrorCodes.CONFIG_INVALID, `--port ${port} is not a port number`, {
            hint: "Use 0–65535 (0 picks a free port).",
          });
        }
        const flags = { ...(host === undefined ? {} : { host }), ...(port === undefined ? {} : { port }) };
        // The runtime and the HTTP server (hono) load when the command runs, not with the plugin.
        const [{ AntlerClient, untilShutdown }, { startGateway }] = await Promise.all([
          import("@antler/plugin-runtime"),
          import("./server.js"),
        ]);
        const shutdown = untilShutdown();
        const client = new AntlerClient({ kernel: io.kernel, ...clientOptionsOf(config) });
        try {
          const gateway = await startGateway({ client, config, ...flags, logger });
          logger.info({ url: gateway.url }, "gateway listening");
          io.stdout.write(`gateway listening on ${gateway.url}\n`);
          const reason = await shutdown.reason;
          io.stdout.write(`${reason}: shutting down (${client.activeRuns} live runs)\n`);
          await gateway.close();
          io.stdout.write("gateway stopped\n");
          return 0;
        } finally {
          shutdown.dispose();
          await client.close();
        }
      },
    });
  },
});

/** `runs:` of the gateway config as the options of the client an instance serves: lease timings and run limit. */
export function clientOptionsOf(config: GatewayConfig): Pick<AntlerClientOptions, "runLeases" | "maxActiveRuns" | "maxAttempts"> {
  return {
    runLeases: runLeasesOf(config),
    maxAttempts: config.runs.max_attempts,
    ...(config.runs.max_active === undefined ? {} : { maxActiveRuns: config.runs.max_active }),
  };
}

/** `runs:` of the gateway config as the client's lease timings. */
export function runLeasesOf(config: GatewayConfig): NonNullable<AntlerClientOptions["runLeases"]> {
  const { heartbeat_seconds, lease_seconds, cancel_wait_seconds } = config.runs;
  return {
    heartbeatMs: heartbeat_seconds * 1000,
    ...(lease_seconds !== undefined ? { leaseMs: lease_seconds * 1000 } : {}),
    ...(cancel_wait_seconds !== undefined ? { cancelWaitMs: cancel_wait_seconds * 1000 } : {}),
  };
}
