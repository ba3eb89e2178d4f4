import { getCurrentTraceId, type Logger, resolveTraceId } from "@antler/kernel";
import type { AntlerClient } from "@antler/plugin-runtime";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { agentTools, askInputSchema, describeAgentTool, toolError } from "./agent-tools.js";
import { artifactTemplate, listArtifacts, readArtifactResource } from "./artifacts.js";
import { runAsk } from "./ask-run.js";
import { callerOf, type McpCaller } from "./caller.js";
import type { McpServerConfig } from "./config.js";
import { describeExposedTool, ExposedToolRunner } from "./exposed-tools.js";
import { PLUGIN_NAME, PLUGIN_VERSION } from "./version.js";

/** The `_meta` key under which Antler's own MCP client sends its trace id (so one trace spans both distributions). */
export const TRACE_META_KEY = "antler/trace_id";

export interface AntlerMcpServerOptions {
  client: AntlerClient;
  config: McpServerConfig;
  logger: Logger;
  /** Who requests act for when the transport names nobody (stdio). Over HTTP each request carries its caller. */
  caller: McpCaller;
  /** Runs the exposed tools (`expose_tools`); servers of one process share one. Omitted: a runner of this server's own. */
  exposed?: ExposedToolRunner | undefined;
}

const INSTRUCTIONS = [
  "Each ask_<agent> tool sends one message to an Antler agent and returns its answer with a thread_id.",
  "Pass that thread_id on the next call to continue the same conversation; omit it to start a new one.",
  "Files the agent presents are resource links (antler://threads/<thread_id>/artifacts/<path>), readable with resources/read.",
].join(" ");

/**
 * An MCP server over an embedded `AntlerClient`: agents as `ask_<agent>` tools and thread artifacts as resources,
 * every request scoped to its caller's user. One per stdio process, one per HTTP session.
 */
export function createAntlerMcpServer(options: AntlerMcpServerOptions): Server {
  const { client, config, logger } = options;
  const server = new Server(
    { name: "antler", title: "Antler", version: PLUGIN_VERSION },
    { capabilities: { tools: { listChanged: false }, resources: { listChanged: false } }, instructions: INSTRUCTIONS },
  );
  const inputSchema = askInputSchema(config.max_message_chars);
  const exposed = options.exposed ?? new ExposedToolRunner(client, config, logger);

  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const caller = callerOf(extra, options.caller);
    const tools = await agentTools(client, caller, config);
    const direct = await exposed.tools(caller);
    return { tools: [...tools.map((t) => describeAgentTool(t, config)), ...direct.map(describeExposedTool)] };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const caller = callerOf(extra, options.caller);
    const name = request.params.name;
    // The HTTP request's trace id (it is the ambient one there), else one Antler's MCP client sent, else a fresh one.
    const traceId = resolveTraceId(getCurrentTraceId(), caller.traceId, request.params._meta?.[TRACE_META_KEY]);
    const tool = (await agentTools(client, caller, config)).find((t) => t.name === name);
    if (!tool) {
      // Only a listed tool (expose_tools) is ever called directly; ask_ names are refused there, so none shadows an agent.
      const direct = (await exposed.tools(caller)).find((e) => e.tool.name === name);
      if (direct) return exposed.call(direct, request.params.arguments, caller, traceId, extra);
    }
    // An unknown tool is a protocol error (the spec's -32602); bad arguments are a tool error the caller can fix.
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`, { tool: name });
    const parsed = inputSchema.safeParse(request.params.arguments ?? {});
    if (!parsed.success) {
      return toolError(
        `Invalid arguments for tool ${name}: ${z.prettifyError(parsed.error)}`,
        `Send { "message": "<text, at most ${config.max_message_chars} characters>", "thread_id"?: "<an earlier call's thread_id>" }.`,
      );
    }
    return runAsk(client, { tool, message: parsed.data.message, threadId: parsed.data.thread_id, caller, traceId }, extra, logger);
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [artifactTemplate] }));
  server.setRequestHandler(ListResourcesRequestSchema, async (request, extra) =>
    listArtifacts(client, callerOf(extra, options.caller), { pageThreads: config.resources.list_threads, cursor: request.params?.cursor }),
  );
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) =>
    readArtifactResource(client, callerOf(extra, options.caller), request.params.uri, { maxBytes: config.resources.max_read_bytes }),
  );
  server.onerror = (error) => logger.warn({ err: error, plugin: PLUGIN_NAME }, "MCP server transport error");
  return server;
}
