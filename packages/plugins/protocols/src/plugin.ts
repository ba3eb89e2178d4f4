import { definePlugin } from "@antler/kernel";
import { provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { z } from "zod";
import { agUiRoutes } from "./ag-ui/route.js";
import { aiSdkRoutes } from "./ai-sdk/route.js";
import { langGraphRoutes } from "./langgraph/routes.js";

export const PROTOCOLS_PLUGIN_NAME = "@antler/plugin-protocols";

const prefixSchema = z
  .string()
  .regex(/^(\/[A-Za-z0-9._~-]+)+$/, 'a path such as "/ai-sdk": starts with "/", no trailing "/", no query')
  .refine((p) => p !== "/api" && !p.startsWith("/api/") && p !== "/health", { message: "must not be under /api or /health" });

export const protocolsConfigSchema = z.strictObject({
  ai_sdk: z
    .strictObject({
      enabled: z.boolean().default(true).describe("Serve the AI SDK UI message stream (useChat's DefaultChatTransport)."),
      prefix: prefixSchema.default("/ai-sdk").describe("Where its routes live: the chat endpoint is <prefix>/chat."),
    })
    .prefault({}),
  langgraph: z
    .strictObject({
      enabled: z
        .boolean()
        .default(true)
        .describe("Serve the LangGraph Agent Server API (@langchain/langgraph-sdk's Client and useStream)."),
      prefix: prefixSchema.default("/langgraph").describe("Where its routes live: the SDK's apiUrl is <gateway>/<prefix>."),
    })
    .prefault({}),
  ag_ui: z
    .strictObject({
      enabled: z.boolean().default(true).describe("Serve AG-UI (@ag-ui/client's HttpAgent)."),
      prefix: prefixSchema.default("/ag-ui").describe("Where its routes live: HttpAgent's url is <gateway>/<prefix>."),
    })
    .prefault({}),
  keepalive_seconds: z.number().positive().max(300).default(15).describe("A comment line this often on a quiet stream."),
});

export type ProtocolsConfig = z.output<typeof protocolsConfigSchema>;

/**
 * `@antler/plugin-protocols`: front-end protocols on the gateway, mapped from Antler's own runs, threads and auth
 * (no second runtime): the LangGraph Agent Server API under `langgraph.prefix`, the AI SDK UI message stream under
 * `ai_sdk.prefix` and AG-UI under `ag_ui.prefix`.
 */
export default definePlugin({
  name: PROTOCOLS_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Open front-end protocols on the gateway: the LangGraph Agent Server API, the AI SDK UI message stream and AG-UI.",
  configSchema: protocolsConfigSchema,
  setup(ctx) {
    const config = ctx.config;
    const keepAliveMs = config.keepalive_seconds * 1000;
    provideGatewayRoutes(ctx, {
      routes: [
        ...(config.ai_sdk.enabled ? aiSdkRoutes({ prefix: config.ai_sdk.prefix, keepAliveMs }) : []),
        ...(config.langgraph.enabled ? langGraphRoutes({ prefix: config.langgraph.prefix, keepAliveMs }) : []),
        ...(config.ag_ui.enabled ? agUiRoutes({ prefix: config.ag_ui.prefix, keepAliveMs }) : []),
      ],
    });
  },
});
