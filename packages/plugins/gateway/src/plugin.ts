import { parseArgs } from "node:util";
import { AntlerError, type CliIO, definePlugin, ErrorCodes } from "@antler/kernel";
import type { AntlerClient, AntlerClientOptions } from "@antler/plugin-runtime";
import { type GatewayConfig, gatewayConfigSchema } from "./config.js";

export const PLUGIN_NAME = "@antler/plugin-gateway";

function parseServeArgs(args: string[]): { host?: string; port?: number } {
  const { values } = parseArgs({
    args,
    options: { host: { type: "string" }, port: { type: "string" } },
    allowPositionals: false,
    strict: true,
  });
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new AntlerError(ErrorCodes.CONFIG_INVALID, `--port ${values.port} is not a port number`, {
        hint: "Use 0–65535 (0 picks a free port).",
      });
    }
  }
  return { ...(values.host === undefined ? {} : { host: values.host }), ...(port === undefined ? {} : { port }) };
}

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
      usage: "antler serve [--config <file>] [--port <n>] [--host <addr>]",
      async run(args: string[], io: CliIO) {
        let flags: { host?: string; port?: number };
        try {
          flags = parseServeArgs(args);
        } catch (error) {
          if (error instanceof AntlerError) throw error;
          throw new AntlerError(ErrorCodes.CONFIG_INVALID, (error as Error).message, {
            hint: "antler serve [--config <file>] [--port <n>] [--host <addr>]",
          });
        }
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
