import { definePlugin } from "@antler/kernel";
import { provideGatewayRoutes } from "@antler/plugin-gateway/routes";
import { z } from "zod";
import { a2aRoutes } from "./server/routes.js";
import { A2ATaskStore, a2aMigrations } from "./server/task-store.js";

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
      name: z.string().min(1).default("Antler").describe("The agent card's name."),
      description: z.string().min(1).default("An Antler agent.").describe("The agent card's description (also the lead agent skill's)."),
      public_url: z
        .url()
        .optional()
        .describe("The origin callers reach the gateway at (behind a proxy); default: the origin each request came to."),
    })
    .prefault({}),
  keepalive_seconds: z.number().positive().max(300).default(15).describe("A comment line this often on a quiet stream."),
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
  description: "Agent2Agent: the distribution as an A2A server (agent card, tasks over JSON-RPC and SSE).",
  configSchema: a2aConfigSchema,
  setup(ctx) {
    const config = ctx.config;
    const store = new A2ATaskStore(() => ctx.storage.openDatabase({ migrations: a2aMigrations }));
    ctx.hooks.stop.tap(async () => {
      await store.close();
    });
    if (config.server.enabled) {
      provideGatewayRoutes(ctx, {
        routes: a2aRoutes({
          store,
          prefix: config.server.prefix,
          name: config.server.name,
          description: config.server.description,
          version: A2A_PLUGIN_VERSION,
          publicUrl: config.server.public_url?.replace(/\/+$/, ""),
          keepAliveMs: config.keepalive_seconds * 1000,
        }),
      });
    }
  },
});
