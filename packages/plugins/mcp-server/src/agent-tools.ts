import { isAntlerError } from "@antler/kernel";
import type { AntlerClient } from "@antler/plugin-runtime";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { McpCaller } from "./caller.js";
import type { McpServerConfig } from "./config.js";

/** The lead agent's tool. */
export const LEAD_AGENT_TOOL = "ask_agent";

/** One agent offered as a tool: `agent` undefined is the lead agent. */
export interface AgentTool {
  name: string;
  agent: string | undefined;
  description: string;
}

/**
 * A custom agent's tool name. Agent names are lowercase letters, digits and `-`, so `ask_` plus the name with `-`
 * as `_` is a valid MCP tool name (letters, digits, `_`, `-`, `.`) and never meets another agent's; only a custom
 * agent called `agent` would take the lead agent's name, and it is `ask_custom_agent` instead.
 */
export function agentToolName(agent: string): string {
  const name = `ask_${agent.replace(/[^A-Za-z0-9_]/g, "_")}`;
  return name === LEAD_AGENT_TOOL ? "ask_custom_agent" : name;
}

/** The arguments of every `ask_<agent>` tool. */
export function askInputSchema(maxMessageChars: number) {
  return z.strictObject({
    message: z.string().min(1).max(maxMessageChars).describe("What to ask the agent: one user message."),
    thread_id: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe("Continue this conversation (a thread_id an earlier call returned); omit to start a new one."),
  });
}

export const askOutputSchema = z.object({
  answer: z.string().describe("The agent's final answer (or, with status input_required, its question)."),
  status: z.enum(["completed", "input_required"]).describe("input_required: the agent asked a question; answer it on the same thread_id."),
  thread_id: z.string().describe("Pass it as thread_id to continue this conversation."),
  run_id: z.string(),
  trace_id: z.string(),
  files: z
    .array(z.object({ uri: z.string(), name: z.string(), path: z.string() }))
    .describe("Files the agent presented in this run, readable as resources."),
});

export type AskOutput = z.output<typeof askOutputSchema>;

function jsonSchemaOf(schema: z.ZodType): Tool["inputSchema"] {
  const { $schema: _, ...json } = z.toJSONSchema(schema) as Record<string, unknown>;
  return json as Tool["inputSchema"];
}

/** The agents this caller may ask, as tools: the lead agent, then the custom agents the config lets through. */
export async function agentTools(client: AntlerClient, caller: McpCaller, config: McpServerConfig): Promise<AgentTool[]> {
  const tools: AgentTool[] = [];
  if (config.lead_agent) {
    tools.push({
      name: LEAD_AGENT_TOOL,
      agent: undefined,
      description:
        "Ask the Antler agent (the distribution's lead agent). It may use its tools, write files and ask back; the answer comes with a thread_id to continue the conversation.",
    });
  }
  const allowed = config.agents === "all" ? null : new Set(config.agents);
  if (allowed === null || allowed.size > 0) {
    const { agents } = await client.listAgents({ userId: caller.userId });
    for (const agent of agents) {
      if (allowed && !allowed.has(agent.name)) continue;
      tools.push({
        name: agentToolName(agent.name),
        agent: agent.name,
        description: `Ask the Antler agent "${agent.name}"${agent.description ? `: ${agent.description}` : "."} The answer comes with a thread_id to continue the conversation.`,
      });
    }
  }
  return tools;
}

/** An agent tool as `tools/list` shows it. */
export function describeAgentTool(tool: AgentTool, config: McpServerConfig): Tool {
  return {
    name: tool.name,
    title: tool.agent === undefined ? "Ask the agent" : `Ask ${tool.agent}`,
    description: tool.description,
    inputSchema: jsonSchemaOf(askInputSchema(config.max_message_chars)),
    outputSchema: jsonSchemaOf(askOutputSchema),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  };
}

/**
 * A tool execution error (`isError: true`), the spec's answer for bad arguments and failed runs: the caller (often
 * a model) reads what went wrong and what to do, and may try again.
 */
export function toolError(message: string, hint?: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text: hint ? `${message}\n${hint}` : message }] };
}

/** An Antler error (a busy thread, a refused model, a failed run) as a tool error naming its code. */
export function antlerToolError(error: unknown): CallToolResult {
  if (isAntlerError(error)) return toolError(`${error.code}: ${error.message.split("\n")[0] ?? ""}`, error.hint);
  return toolError(`ANTLER_ERR_INTERNAL: ${error instanceof Error ? error.message : String(error)}`);
}
