import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { AntlerError, ErrorCodes, type Kernel, type Logger } from "@antler/kernel";
import type { AntlerClient } from "@antler/plugin-runtime";
import { type GatewayRequestWrapper, type GatewayRoute, type GatewayServeHook, gatewayRoutesToken } from "@antler/plugin-runtime/routes";
import { getRequestListener } from "@hono/node-server";
import type { Hono } from "hono";
import { createGatewayApp, type GatewayEnv } from "./app.js";
import { type GatewayConfig, type GatewayConfigInput, gatewayConfigSchema } from "./config.js";
import { loadMcpAdmin, mcpServeHook } from "./mcp-optional.js";
import type { RunEventLog } from "./run-events/log.js";
import { openRunEventLog } from "./run-events/open.js";
import { answerClientError, answerUnroutableRequest } from "./trace-edge.js";

export interface StartGatewayOptions {
  client: AntlerClient;
  /** The plugin's config (defaults applied when partial). */
  config?: GatewayConfigInput;
  /** Overrides `config.host` / `config.port` (the serve command's flags). */
  host?: string;
  port?: number;
  /** Contributed routes; default: everything the kernel's plugins provide through `gatewayRoutesToken`. */
  routes?: ReadonlyArray<{ plugin: string; route: GatewayRoute }>;
  /** Request wrappers; default: every `aroundRequest` the kernel's plugins provide through `gatewayRoutesToken`. */
  requestWrappers?: ReadonlyArray<{ plugin: string; around: GatewayRequestWrapper }>;
  logger?: Logger;
  onUnhandledError?: (error: unknown, traceId: string) => void;
  /** Milliseconds to wait for open connections after live runs were cancelled. Default 5000. */
  shutdownGraceMs?: number;
}

export interface RunningGateway {
  readonly app: Hono<GatewayEnv>;
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The Node HTTP server (for connection-level control: timeouts, socket counts). */
  readonly server: Server;
  /** The run event log (`stream_bridge`), or null for `none`. */
  readonly runEvents: RunEventLog | null;
  /** Stops accepting connections, cancels live runs, waits for streams to end. Does not close the client. */
  close(): Promise<void>;
}

/** Addresses only this machine can connect to. */
function isLoopbackAddress(host: string): boolean {
  const name = host.toLowerCase();
  return name === "localhost" || name === "::1" || /^(?:::ffff:)?127(?:\.\d{1,3}){3}$/.test(name);
}

/** Every route the loaded plugins contribute through `provideGatewayRoutes`, in plugin load order. */
export function collectContributedRoutes(kernel: Kernel): Array<{ plugin: string; route: GatewayRoute }> {
  const out: Array<{ plugin: string; route: GatewayRoute }> = [];
  for (const plugin of kernel.plugins) {
    const contribution = kernel.scope.tryResolve(gatewayRoutesToken(plugin.name));
    for (const route of contribution?.routes ?? []) out.push({ plugin: plugin.name, route });
  }
  return out;
}

/** Every loaded plugin's `aroundRequest` wrapper, in plugin load order (the first one is outermost). */
export function collectRequestWrappers(kernel: Kernel): Array<{ plugin: string; around: GatewayRequestWrapper }> {
  const out: Array<{ plugin: string; around: GatewayRequestWrapper }> = [];
  for (const plugin of kernel.plugins) {
    const around = kernel.scope.tryResolve(gatewayRoutesToken(plugin.name))?.aroundRequest;
    if (around) out.push({ plugin: plugin.name, around });
  }
  return out;
}

/** Every loaded plugin's `onServe` hook, in plugin load order. */
export function collectServeHooks(kernel: Kernel): Array<{ plugin: string; onServe: GatewayServeHook }> {
  const out: Array<{ plugin: string; onServe: GatewayServeHook }> = [];
  for (const plugin of kernel.plugins) {
    const onServe = kernel.scope.tryResolve(gatewayRoutesToken(plugin.name))?.onServe;
    if (onServe) out.push({ plugin: plugin.name, onServe });
  }
  const mcp = mcpServeHook(kernel);
  if (mcp) out.push(mcp);
  return out;
}

export function parseGatewayConfig(input: GatewayConfigInput | undefined): GatewayConfig {
  const parsed = gatewayConfigSchema.safeParse(input ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, issue?.message ?? "invalid gateway config", {
      where: `@antler/plugin-gateway config.${(issue?.path ?? []).map(String).join(".")}`,
    });
  }
  return parsed.data;
}

/**
 * `auth.mode: none` makes reaching the port the only credential, so it binds loopback unless the config says
 * otherwise in so many words.
 */
function assertKeylessBindAllowed(config: GatewayConfig, host: string, fromFlag: boolean): void {
  if (config.auth.mode !== "none" || config.auth.allow_none_on_network || isLoopbackAddress(host)) return;
  throw new AntlerError(
    ErrorCodes.CONFIG_INVALID,
    `auth.mode none serves one unauthenticated user and binds only loopback addresses, not ${host}${fromFlag ? " (from --host)" : ""}`,
    {
      where: "@antler/plugin-gateway config.auth.allow_none_on_network",
      hint: "Bind 127.0.0.1 (the default), or configure auth.mode api_keys with auth.api_keys to serve other hosts. To serve a network you trust without keys (a container's private network, a VPN), set auth.allow_none_on_network: true and list the names clients use in allowed_hosts.",
      details: { host, auth_mode: "none" },
    },
  );
}

/** Starts the gateway on loopback (or the configured host) and resolves once it is listening. */
export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const config = parseGatewayConfig(options.config);
  const host = options.host ?? config.host;
  const port = options.port ?? config.port;
  assertKeylessBindAllowed(config, host, options.host !== undefined);
  const { client } = options;
  if (client.kernel.status === "booted") await client.kernel.start();
  const edgeLogger = options.logger ?? client.kernel.logger.child({ plugin: "@antler/plugin-gateway" });
  if (config.auth.mode === "none" && !isLoopbackAddress(host)) {
    edgeLogger.warn(
      { host, user: config.auth.user },
      "auth.mode none on a network address (auth.allow_none_on_network): anyone who can reach the port acts as the gateway's one user",
    );
  }
  // Every run of the client is logged from here on, whoever consumes it (a stream, runs/wait, the scheduler).
  const runEvents = await openRunEventLog(client, config, edgeLogger);
  const detachRunEvents = runEvents ? client.observeRuns(runEvents) : () => {};
  const closeRunEvents = async () => {
    detachRunEvents();
    await runEvents?.close();
  };
  let app: Hono<GatewayEnv>;
  try {
    app = createGatewayApp({
      client,
      config,
      mcp: await loadMcpAdmin(client.kernel),
      routes: options.routes ?? collectContributedRoutes(client.kernel),
      requestWrappers: options.requestWrappers ?? collectRequestWrappers(client.kernel),
      runEvents,
      logger: options.logger,
      onUnhandledError: options.onUnhandledError,
    });
  } catch (error) {
    await closeRunEvents();
    throw error;
  }
  // Requests refused before the app runs (by Node's parser, or by the adapter for an invalid URL) still get a
  // coded answer carrying an X-Trace-Id, like every other response.
  const server = createServer(getRequestListener(app.fetch, { hostname: host, errorHandler: answerUnroutableRequest(edgeLogger) }));
  server.on("clientError", answerClientError(edgeLogger));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await closeRunEvents();
    throw error;
  });
  // Plugins' background work (a scheduler's poller, ...) runs while the server does; a hook that fails to
  // start stops the ones before it and the server, and the error names the plugin.
  const stops: Array<{ plugin: string; stop: () => Promise<void> | void }> = [];
  const stopBackground = async () => {
    for (const { plugin, stop } of stops.splice(0).reverse()) {
      try {
        await stop();
      } catch (err) {
        options.logger?.error({ err, plugin }, "a plugin's gateway background work failed to stop");
      }
    }
  };
  // First, the gateway's own: a serving instance finishes a dead instance's runs even when no request comes in.
  const idleSweep = { plugin: "@antler/plugin-gateway (idle run sweep)", onServe: (c: AntlerClient) => c.sweepWhileIdle() };
  // An executing instance also runs what other instances queued (`runs.execute: false` gateways) when it has room.
  const queued = { plugin: "@antler/plugin-gateway (queued runs)", onServe: (c: AntlerClient) => c.executeQueued() };
  const own = config.runs.execute ? [idleSweep, queued] : [idleSweep];
  for (const { plugin, onServe } of [...own, ...collectServeHooks(client.kernel)]) {
    try {
      const stop = await onServe(client);
      if (typeof stop === "function") stops.push({ plugin, stop });
    } catch (err) {
      await stopBackground();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeRunEvents();
      throw new AntlerError(
        ErrorCodes.PLUGIN_SETUP_FAILED,
        `${plugin} failed to start its work in the gateway: ${(err as Error)?.message ?? String(err)}`,
        {
          where: plugin,
          cause: err,
        },
      );
    }
  }
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    app,
    url: `http://${shownHost}:${address.port}`,
    host: address.address,
    port: address.port,
    server,
    runEvents,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await stopBackground();
        // Live runs stop (handed over to the next instance, or cancelled), and their streams end with an error frame
        // that says which, so the sockets can close.
        if (config.runs.on_shutdown === "hand_over") {
          const handed = await client.handOverAll();
          if (handed > 0)
            edgeLogger.info({ runs: handed }, "handed live runs over: another instance (or this one after a restart) continues them");
        } else await client.cancelAll("gateway shutting down");
        const grace = new Promise<void>((resolve) => setTimeout(resolve, options.shutdownGraceMs ?? 5000).unref());
        await Promise.race([stopped, grace]);
        server.closeAllConnections();
        await stopped;
        // After the runs ended: their last events are written before the store closes.
        await closeRunEvents();
      })();
      return closing;
    },
  };
}
