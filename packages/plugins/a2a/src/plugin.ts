import { definePlugin, type PluginContext, resolveTraceId } from "@antler/kernel";
import { provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { z } from "zod";
import { type A2AAgentConfig, a2aClientConfigSections } from "./client/config.js";
import { INVOKE_A2A_AGENT_TOOL } from "./client/names.js";
import { A2ARemoteSessionStore, a2aClientMigrations } from "./client/session-store.js";
import { PushNotifier } from "./server/push.js";
import { a2aRoutes } from "./server/routes.js";
import { A2APushConfigStore, A2ATaskStore, a2aMigrations } from "./server/task-store.js";

export const A2A_PLUGIN_NAME = "@antler/plugin-a2a";
export const A2A_PLUGIN_VERSION = "0.1.0";

const prefixSchema = z
  .string()
  .regex(/^(\/[A-Za-z0-9._~-]+)+$/, 'a path such as "/a2a": starts with "/", no trailing "/", no query')
  .refine((p) => p !== "/api" && !p.startsWith("/api/") && p !== "/health", { message: "must not be under /api or /health" });

export const a2aConfigSchema = z.strictObject({
  server: z
    .strictObject({
      enabled: z.boolean().default(true).describe("Serve this distribution as an A2A agent on the gateway."),
      prefix: prefixSchema.default("/a2a").describe("The JSON-RPC endpoint; the agent card is always at /.well-known/agent-card.json."),
      rest: z.boolean().default(true).describe("Serve the HTTP+JSON (REST) binding too, at <prefix>/rest."),
      name: z.string().min(1).default("Antler").describe("The agent card's name."),
      description: z.string().min(1).default("An Antler agent.").describe("The agent card's description (also the lead agent skill's)."),
      public_url: z
        .url()
        .optional()
        .describe("The origin callers reach the gateway at (behind a proxy); default: the origin each request came to."),
    })
    .prefault({}),
  keepalive_seconds: z.number().positive().max(300).default(15).describe("A comment line this often on a quiet stream."),
  push: z
    .strictObject({
      enabled: z.boolean().default(true).describe("Accept push-notification configs (webhooks) for tasks."),
      allow_private_addresses: z
        .boolean()
        .default(false)
        .describe("Let webhooks be on loopback or private addresses (dev, tests, one network). Cloud metadata stays blocked."),
      max_attempts: z.number().int().min(1).max(20).default(6).describe("Tries per delivery before it is given up (logged)."),
      initial_backoff_ms: z.number().int().min(1).max(60_000).default(1000).describe("Wait before the first retry; doubled each time."),
      max_backoff_ms: z.number().int().min(1).max(3_600_000).default(60_000).describe("The longest wait between two tries."),
      timeout_seconds: z.number().positive().max(300).default(10).describe("One delivery attempt."),
      max_configs_per_task: z.number().int().min(1).max(100).default(10),
    })
    .prefault({}),
});

export type A2AConfig = z.output<typeof a2aConfigSchema>;

/**
 * `@antler/plugin-a2a`: the distribution as an A2A (Agent2Agent) server on the gateway, on `@a2a-js/sdk`'s JSON-RPC
 * transport: an agent card at the well-known path, a task per run on a thread, the mapping in the kernel's SQL store.
 */
export default definePlugin({
  name: A2A_PLUGIN_NAME,
  version: A2A_PLUGIN_VERSION,
  kernel: "^0.1.0",
  description: "Agent2Agent: the distribution as an A2A server (agent card, tasks over JSON-RPC and SSE), and remote A2A agents as a tool.",
  configSchema: a2aConfigSchema,
  configSections: a2aClientConfigSections,
  setup(ctx) {
    const config = ctx.config;
    const store = new A2ATaskStore(() => ctx.storage.openDatabase({ migrations: a2aMigrations }));
    ctx.hooks.stop.tap(async () => {
      await store.close();
    });
    const agents = (ctx.kernelConfig as { a2a_agents?: A2AAgentConfig[] }).a2a_agents ?? [];
    if (agents.length > 0) setupA2AClient(ctx, agents);
    if (config.server.enabled) {
      const push = config.push.enabled
        ? new PushNotifier(new A2APushConfigStore(() => ctx.storage.openDatabase({ migrations: a2aMigrations })), {
            allowPrivateAddresses: config.push.allow_private_addresses,
            maxAttempts: config.push.max_attempts,
            initialBackoffMs: config.push.initial_backoff_ms,
            maxBackoffMs: config.push.max_backoff_ms,
            timeoutMs: config.push.timeout_seconds * 1000,
            maxConfigsPerTask: config.push.max_configs_per_task,
            logger: ctx.logger,
          })
        : undefined;
      ctx.hooks.stop.tap(async () => {
        await push?.close();
        await push?.store.close();
      });
      provideGatewayRoutes(ctx, {
        routes: a2aRoutes({
          store,
          prefix: config.server.prefix,
          name: config.server.name,
          description: config.server.description,
          version: A2A_PLUGIN_VERSION,
          publicUrl: config.server.public_url?.replace(/\/+$/, ""),
          keepAliveMs: config.keepalive_seconds * 1000,
          logger: ctx.logger,
          push,
          pushNotifications: push !== undefined,
          rest: config.server.rest,
        }),
      });
    }
  },
});

/**
 * The client side: `invoke_a2a_agent` for the `a2a_agents:` of config.yaml. The SDK client, the SSRF guard and the
 * tool load with the first assembly; the agents' cards are read then (and again after a few minutes) for the
 * tool's description.
 */
function setupA2AClient(ctx: PluginContext<A2AConfig>, agents: readonly A2AAgentConfig[]) {
  const sessions = new A2ARemoteSessionStore(() => ctx.storage.openDatabase({ migrations: a2aClientMigrations }));
  let remote: Promise<import("./client/remote.js").RemoteAgents> | undefined;
  const loadRemote = () => (remote ??= import("./client/remote.js").then((m) => new m.RemoteAgents(agents)));
  ctx.hooks.stop.tap(async () => {
    await sessions.close();
    const loaded = await remote?.catch(() => undefined);
    await loaded?.close();
  });
  ctx.tools.add(
    async () => {
      const [{ createInvokeA2AAgentTool }, agentsClient] = await Promise.all([import("./client/invoke-tool.js"), loadRemote()]);
      const cards = new Map<string, import("@a2a-js/sdk").AgentCard | Error>();
      await Promise.all(
        agents.map(async (agent) => {
          const signal = AbortSignal.timeout(Math.min(agent.timeout_seconds, 10) * 1000);
          const card = await agentsClient.describe(agent, resolveTraceId(), signal);
          if (card instanceof Error)
            ctx.logger.warn(`a2a_agents ${agent.name}: the card could not be read: ${card.message.split("\n")[0]}`);
          cards.set(agent.name, card);
        }),
      );
      return createInvokeA2AAgentTool({ remote: agentsClient, sessions, logger: ctx.logger, cards });
    },
    { name: INVOKE_A2A_AGENT_TOOL, group: "a2a" },
  );
}
