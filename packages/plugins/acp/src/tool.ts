import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { McpServer } from "@agentclientprotocol/sdk";
import { type AntlerTool, DEFAULT_USER_ID, getCurrentTraceId, isAntlerError, threadPaths } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import type { McpServerConfig } from "@antler/plugin-mcp";
import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { z } from "zod";
import { type AcpTurnResult, runAcpTurn } from "./acp-turn.js";
import { type AcpAgentConfig, type AcpConfig, type AcpMcpServerConfig, resolveEnvRefs } from "./config.js";
import { ACP_WORKSPACE_DIR, ACP_WORKSPACE_VIRTUAL, INVOKE_ACP_AGENT } from "./names.js";

export interface InvokeAcpAgentOptions {
  config: AcpConfig;
  baseDir: string;
  /** Host environment for `$VAR` substitution and the agent process; `process.env` when omitted. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Antler's own MCP servers, shared with each session when `share_mcp_servers` is on. */
  antlerMcpServers?: () => McpServer[];
}

const argsSchema = z.object({
  agent: z.string().min(1).describe("Name of the configured ACP agent to hand the task to."),
  prompt: z.string().min(1).describe("The complete task for the agent; it does not see this conversation."),
});

/** Builds `invoke_acp_agent` for the configured agents. */
export function createInvokeAcpAgentTool(options: InvokeAcpAgentOptions): AntlerTool {
  const agents = options.config.acp_agents;
  const names = Object.keys(agents);
  const listing = names.map((name) => `- ${name}: ${agents[name]?.description ?? ""}`).join("\n");
  return defineTool({
    name: INVOKE_ACP_AGENT,
    description:
      "Hand a self-contained task to an external coding agent over the Agent Client Protocol and return its answer. " +
      `The agent works in its own per-thread folder; files it writes are visible to you read-only at ${ACP_WORKSPACE_VIRTUAL}/.\n` +
      `Available agents:\n${listing}`,
    schema: argsSchema,
    run: async ({ agent, prompt }, runtime) => {
      const config = agents[agent];
      if (!config) {
        return refusal(runtime, `unknown ACP agent "${agent}". Configured agents: ${names.join(", ")}.`);
      }
      const scope = scopeOf(runtime);
      if (!scope) return refusal(runtime, "invoke_acp_agent needs a thread: the run has no thread_id.");
      const cwd = join(threadPaths(options.baseDir, scope.userId, scope.threadId).threadDir, ACP_WORKSPACE_DIR);
      const hostEnv = options.env ?? process.env;
      let agentEnv: Record<string, string>;
      let mcpServers: McpServer[];
      try {
        agentEnv = resolveEnvRefs(config.env, hostEnv, `acp_agents.${agent}`);
        mcpServers = [
          ...(options.config.share_mcp_servers ? (options.antlerMcpServers?.() ?? []) : []),
          ...options.config.mcp_servers.map((server, i) => toMcpServer(server, hostEnv, `mcp_servers[${i}]`)),
        ];
      } catch (err) {
        return refusal(runtime, errorText(err));
      }
      await mkdir(cwd, { recursive: true });
      const result = await runAcpTurn({
        command: config.command,
        args: config.args,
        env: { ...hostEnv, ...agentEnv },
        cwd,
        prompt,
        autoApprovePermissions: config.auto_approve_permissions,
        timeoutMs: config.timeout_seconds * 1000,
        mcpServers,
        model: config.model,
        traceId: getCurrentTraceId(),
        signal: runtime.signal,
      });
      return present(runtime, agent, config, result);
    },
  });
}

function present(runtime: ToolRuntime, agent: string, config: AcpAgentConfig, result: AcpTurnResult): string | ToolMessage {
  const where = `Files it wrote are visible read-only at ${ACP_WORKSPACE_VIRTUAL}/.`;
  switch (result.kind) {
    case "done": {
      const denied = result.permissions.filter((p) => !p.granted).map((p) => p.title);
      const notes = [
        result.stopReason === "end_turn" ? "" : `The turn stopped with reason "${result.stopReason}".`,
        denied.length > 0
          ? `Permission was denied for: ${denied.join("; ")} (auto_approve_permissions is ${String(config.auto_approve_permissions)}).`
          : "",
        where,
      ].filter((n) => n !== "");
      const body = result.text.trim() === "" ? "(the agent sent no message text)" : result.text;
      return `ACP agent "${agent}" answered:\n\n${body}\n\n${notes.join("\n")}`;
    }
    case "timeout":
      return refusal(
        runtime,
        `ACP agent "${agent}" did not finish within ${config.timeout_seconds}s; the session was cancelled and the agent process ended. ` +
          `Raise acp_agents.${agent}.timeout_seconds or give it a smaller task. ${where}` +
          partial(result.text),
      );
    case "aborted":
      return refusal(
        runtime,
        `the run was cancelled while ACP agent "${agent}" was working; the agent process was ended.${partial(result.text)}`,
      );
    case "not-found":
      return refusal(
        runtime,
        `the command "${result.command}" for ACP agent "${agent}" was not found on PATH. ` +
          `Install it, or point acp_agents.${agent}.command at an ACP adapter, for example command "npx" with args ` +
          `["-y", "@zed-industries/codex-acp"] or ["-y", "@zed-industries/claude-agent-acp"]. Plain CLIs such as codex do not speak ACP by themselves.`,
      );
    case "failed":
      return refusal(
        runtime,
        `ACP agent "${agent}" failed: ${result.message}.` +
          (result.stderr ? ` Its stderr ended with:\n${result.stderr}` : "") +
          partial(result.text),
      );
  }
}

function partial(text: string): string {
  return text.trim() === "" ? "" : `\nPartial output:\n${text}`;
}

function toMcpServer(server: AcpMcpServerConfig, hostEnv: Readonly<Record<string, string | undefined>>, where: string): McpServer {
  const env = resolveEnvRefs(server.env, hostEnv, where);
  return {
    name: server.name,
    command: server.command,
    args: server.args,
    env: nameValues(env),
  };
}

/** `{ KEY: "v" }` as ACP's `[{ name: "KEY", value: "v" }]` (environment variables, HTTP headers). */
function nameValues(record: Readonly<Record<string, string>>): Array<{ name: string; value: string }> {
  return Object.entries(record).map(([name, value]) => ({ name, value }));
}

/**
 * Antler's MCP servers as ACP `McpServer`s. OAuth-protected servers are left out: their tokens are Antler's, and
 * the agent could not refresh them.
 */
export function acpServersFromMcp(
  servers: ReadonlyArray<{ name: string; config: McpServerConfig }>,
  logger?: { debug(obj: object, msg?: string): void },
): McpServer[] {
  const out: McpServer[] = [];
  for (const { name, config } of servers) {
    if (config.transport === "stdio") {
      if (!config.command) continue;
      out.push({
        name,
        command: config.command,
        args: [...config.args],
        env: nameValues(config.env),
      });
      continue;
    }
    if (config.oauth || !config.url) {
      logger?.debug({ server: name }, "MCP server with OAuth not shared with ACP agents");
      continue;
    }
    const headers = nameValues(config.headers);
    out.push(
      config.transport === "http" ? { type: "http", name, url: config.url, headers } : { type: "sse", name, url: config.url, headers },
    );
  }
  return out;
}

function scopeOf(runtime: ToolRuntime): { userId: string; threadId: string } | undefined {
  const ctx = (runtime.context !== null && typeof runtime.context === "object" ? runtime.context : {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const threadId = text(ctx.thread_id) ?? text(runtime.configurable?.thread_id);
  if (threadId === undefined) return undefined;
  return { threadId, userId: text(ctx.user_id) ?? DEFAULT_USER_ID };
}

function errorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return isAntlerError(err) ? message.replace(/\s*\n\s*/g, " ") : message;
}

/** An expected failure the model should read and act on: an error ToolMessage starting with `Error:`. */
function refusal(runtime: ToolRuntime, text: string): ToolMessage {
  return new ToolMessage({ content: `Error: ${text}`, name: INVOKE_ACP_AGENT, tool_call_id: runtime.toolCallId ?? "", status: "error" });
}
