import { randomUUID } from "node:crypto";
import {
  AntlerError,
  type AntlerTool,
  ErrorCodes,
  ensureTraceContext,
  isAntlerError,
  type Kernel,
  type Logger,
  type ToolEntry,
  TRACE_METADATA_KEY,
} from "@antler/kernel";
import { withRunContext } from "@antler/kernel/authoring";
import { type AntlerClient, compileThreadPipeline } from "@antler/plugin-runtime";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { antlerToolError, toolError } from "./agent-tools.js";
import type { McpCaller, McpRequestExtra } from "./caller.js";
import type { McpServerConfig } from "./config.js";

const GROUP_PREFIX = "group:";

/**
 * Tools that mean something only inside an agent turn: they ask the user, show files to the user, plan, delegate,
 * search the agent's own deferred tools, or edit the calling agent. A direct call has no turn and no model to answer.
 */
const TURN_TOOLS: ReadonlySet<string> = new Set([
  "ask_clarification",
  "present_files",
  "view_image",
  "write_todos",
  "task",
  "tool_search",
  "setup_agent",
  "update_agent",
]);

/**
 * The sandbox middleware acquires the thread's sandbox lease on a call to one of these and releases it when the
 * agent's turn ends (`afterAgent`); a direct call has no turn to end, so the lease would never be released.
 */
const SANDBOX_TOOLS: ReadonlySet<string> = new Set(["bash", "ls", "glob", "grep", "read_file", "write_file", "str_replace"]);

/** Why a tool cannot be exposed directly, or undefined when it can. */
function notExposable(name: string): string | undefined {
  if (TURN_TOOLS.has(name)) return `"${name}" only works inside an agent's turn (it talks to the model or the user)`;
  if (SANDBOX_TOOLS.has(name)) return `"${name}" runs in the thread's sandbox, whose lease only an agent's turn releases`;
  if (name.startsWith("ask_")) return `"${name}" starts with ask_, the agent tools' prefix`;
  return undefined;
}

/** The tools a direct call may see: what the kernel assembles for a non-interactive agent of this caller and role. */
async function assembled(kernel: Kernel, caller: McpCaller): Promise<ToolEntry[]> {
  const context: Record<string, unknown> = { user_id: caller.userId, non_interactive: true };
  if (caller.role !== undefined) context.user_role = caller.role;
  return kernel.assembleTools({ context });
}

/**
 * Checks `expose_tools` against the assembled tool set, at start: an unknown name, an empty group or a tool that
 * cannot run outside an agent turn is a config error naming the entry and listing what can be exposed.
 */
export async function checkExposedTools(kernel: Kernel, config: McpServerConfig, caller: McpCaller): Promise<void> {
  if (config.expose_tools.length === 0) return;
  // With authorization on, each role is assembled a different tool set: a name is known when any role may have it
  // (a caller still sees only what their own role is assembled).
  const byName = new Map<string, ToolEntry>();
  for (const role of [undefined, ...configuredRoles(kernel)]) {
    for (const entry of await assembled(kernel, { ...caller, role })) if (!byName.has(entry.tool.name)) byName.set(entry.tool.name, entry);
  }
  const entries = [...byName.values()];
  const exposable = entries.filter((e) => notExposable(e.tool.name) === undefined);
  const available = () => {
    const names = exposable.map((e) => e.tool.name).sort();
    const groups = [...new Set(exposable.flatMap((e) => (e.group === undefined ? [] : [`${GROUP_PREFIX}${e.group}`])))].sort();
    return `Tools that can be exposed: ${names.join(", ") || "(none)"}${groups.length > 0 ? `; groups: ${groups.join(", ")}` : ""}.`;
  };
  config.expose_tools.forEach((item, index) => {
    const where = `plugins["@antler/plugin-mcp-server"].config.expose_tools[${index}]`;
    if (item.startsWith(GROUP_PREFIX)) {
      const group = item.slice(GROUP_PREFIX.length);
      if (!exposable.some((e) => e.group === group)) {
        throw new AntlerError(ErrorCodes.CONFIG_INVALID, `no tool that can be exposed is in group "${group}"`, {
          where,
          hint: available(),
        });
      }
      return;
    }
    const reason = notExposable(item);
    if (reason !== undefined) {
      throw new AntlerError(ErrorCodes.CONFIG_INVALID, `${reason}, so it cannot be exposed as an MCP tool`, {
        where,
        hint: `Let an agent call it (ask_agent) instead. ${available()}`,
      });
    }
    if (!entries.some((e) => e.tool.name === item)) {
      throw new AntlerError(ErrorCodes.CONFIG_INVALID, `no tool named "${item}" in this distribution`, {
        where,
        hint: available(),
      });
    }
  });
}

/** The role names under `authorization.roles` when authorization is enabled (read from config, nothing else). */
function configuredRoles(kernel: Kernel): string[] {
  const section = (kernel.config as Readonly<Record<string, unknown>>).authorization as
    | { enabled?: unknown; roles?: Record<string, unknown> }
    | undefined;
  if (section?.enabled !== true || section.roles === null || typeof section.roles !== "object") return [];
  return Object.keys(section.roles);
}

/**
 * The listed tools this caller may call: `expose_tools` over the tools assembled for the caller (so a role that
 * authorization keeps from a tool's group does not see it either). Never a tool that is not listed.
 */
export async function exposedToolsFor(kernel: Kernel, config: McpServerConfig, caller: McpCaller): Promise<ToolEntry[]> {
  if (config.expose_tools.length === 0) return [];
  const names = new Set(config.expose_tools.filter((item) => !item.startsWith(GROUP_PREFIX)));
  const groups = new Set(config.expose_tools.filter((item) => item.startsWith(GROUP_PREFIX)).map((g) => g.slice(GROUP_PREFIX.length)));
  return (await assembled(kernel, caller)).filter(
    (e) => notExposable(e.tool.name) === undefined && (names.has(e.tool.name) || (e.group !== undefined && groups.has(e.group))),
  );
}

function isZod(schema: unknown): schema is z.ZodType {
  return schema instanceof z.ZodType;
}

/** The tool's arguments as JSON Schema: from its zod schema, or the JSON Schema it already carries (MCP-client tools). */
function inputJsonSchema(tool: AntlerTool): Tool["inputSchema"] {
  const schema: unknown = tool.schema;
  if (isZod(schema)) {
    const { $schema: _, ...json } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    return { ...json, type: "object" } as Tool["inputSchema"];
  }
  if (schema !== null && typeof schema === "object" && (schema as { type?: unknown }).type === "object") {
    return schema as Tool["inputSchema"];
  }
  return { type: "object" };
}

/** An exposed tool as `tools/list` shows it. */
export function describeExposedTool(entry: ToolEntry): Tool {
  return {
    name: entry.tool.name,
    description: entry.tool.description,
    inputSchema: inputJsonSchema(entry.tool),
    annotations: { openWorldHint: true },
  };
}

type ToolHandler = (request: ToolCallRequest) => Promise<unknown>;
interface ToolCallRequest {
  toolCall: { id: string; name: string; args: Record<string, unknown>; type: "tool_call" };
  tool: AntlerTool;
  state: Record<string, unknown>;
  runtime: Record<string, unknown>;
}
type ToolCallWrapper = (request: ToolCallRequest, handler: ToolHandler) => Promise<unknown>;

/**
 * Calls exposed tools for MCP callers through the agent pipeline's `wrapToolCall` chain (guardrails, tool error
 * handling, metrics, tracing), compiled on the first call from `assembleMiddleware` (one runner per stdio process or
 * gateway instance), the first middleware outermost as in LangChain's agent.
 */
export class ExposedToolRunner {
  private chain: Promise<ToolCallWrapper[]> | undefined;

  constructor(
    private readonly client: AntlerClient,
    private readonly config: McpServerConfig,
    private readonly logger: Logger,
  ) {}

  /** The exposed tools as this caller's agent would assemble them. */
  tools(caller: McpCaller): Promise<ToolEntry[]> {
    return exposedToolsFor(this.client.kernel, this.config, caller);
  }

  private wrappers(): Promise<ToolCallWrapper[]> {
    this.chain ??= (async () => {
      const chain = await this.client.kernel.assembleMiddleware({ subagent: false, context: { non_interactive: true } });
      const { middleware } = compileThreadPipeline(chain);
      return middleware.flatMap((m) => {
        const wrap = (m as { wrapToolCall?: ToolCallWrapper }).wrapToolCall;
        return wrap ? [wrap.bind(m)] : [];
      });
    })();
    this.chain.catch(() => {
      this.chain = undefined;
    });
    return this.chain;
  }

  /** One call: its arguments checked against the tool's schema, then the tool run on a new thread of the caller. */
  call(entry: ToolEntry, args: unknown, caller: McpCaller, traceId: string, extra: McpRequestExtra): Promise<CallToolResult> {
    // The tool's logs and outgoing requests carry the caller's trace id.
    return ensureTraceContext(traceId, () => this.callTraced(entry, args, caller, traceId, extra));
  }

  private async callTraced(
    entry: ToolEntry,
    args: unknown,
    caller: McpCaller,
    traceId: string,
    extra: McpRequestExtra,
  ): Promise<CallToolResult> {
    const { tool } = entry;
    const schema: unknown = tool.schema;
    const callArgs = (args ?? {}) as Record<string, unknown>;
    if (isZod(schema)) {
      const parsed = schema.safeParse(callArgs);
      if (!parsed.success) {
        return toolError(
          `Invalid arguments for tool ${tool.name}: ${z.prettifyError(parsed.error)}`,
          "Send arguments that match the tool's inputSchema (tools/list).",
        );
      }
    }
    const meta: Record<string, unknown> = { "antler/trace_id": traceId };
    const runId = `mcp-${randomUUID()}`;
    try {
      const thread = await this.client.createThread({ userId: caller.userId, metadata: { source: "mcp-tool", tool: tool.name } });
      const threadId = thread.thread_id;
      Object.assign(meta, { "antler/thread_id": threadId, "antler/run_id": runId });
      this.logger.info(
        { trace_id: traceId, run_id: runId, tool: tool.name, thread_id: threadId, user_id: caller.userId },
        "MCP direct tool call",
      );
      // A kernel run (its DI scope for run-scoped services, and the runStart/runEnd hooks tracing and metrics
      // watch), cancelled by the request's signal; it has no model turn and no run record.
      const output = await this.client.kernel.run(
        async (run) => {
          const context = withRunContext(
            {
              user_id: caller.userId,
              ...(caller.role !== undefined ? { user_role: caller.role } : {}),
              thread_id: threadId,
              non_interactive: true,
              [TRACE_METADATA_KEY]: traceId,
            },
            run,
          );
          const configurable = { thread_id: threadId, run_id: runId, [TRACE_METADATA_KEY]: traceId };
          const base: ToolHandler = async (request) =>
            request.tool.invoke({ ...request.toolCall }, {
              context,
              configurable,
              metadata: { [TRACE_METADATA_KEY]: traceId, run_id: runId },
              signal: run.signal,
              toolCallId: request.toolCall.id,
              state: request.state,
            } as never);
          const wrappers = await this.wrappers();
          const chain = wrappers.reduceRight<ToolHandler>((next, wrap) => (request) => wrap(request, next), base);
          return chain({
            toolCall: { id: runId, name: tool.name, args: callArgs, type: "tool_call" },
            tool,
            state: { messages: [] },
            runtime: { context, configurable, signal: run.signal },
          });
        },
        { runId, threadId, userId: caller.userId, traceId, signal: extra.signal },
      );
      return { ...resultOf(tool.name, output), _meta: meta };
    } catch (error) {
      if (isAntlerError(error, ErrorCodes.RUN_CANCELLED)) {
        // Nobody reads the answer to a cancelled request; the SDK drops it.
        this.logger.info({ trace_id: traceId, run_id: runId, tool: tool.name }, "MCP direct tool call cancelled");
        return toolError(`${ErrorCodes.RUN_CANCELLED}: the call was cancelled`);
      }
      this.logger.warn({ err: error, trace_id: traceId, run_id: runId, tool: tool.name }, "MCP direct tool call failed");
      return { ...antlerToolError(error), _meta: meta };
    }
  }
}

/** A tool's output as an MCP result: its ToolMessage's text (an error status as `isError`). */
function resultOf(name: string, output: unknown): CallToolResult {
  const message = toolMessageOf(output);
  if (message) {
    const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
    return message.status === "error" ? toolError(text) : { content: [{ type: "text", text }] };
  }
  if (typeof output === "string") return { content: [{ type: "text", text: output }] };
  if (output !== null && typeof output === "object" && "update" in output) {
    return toolError(`${name} answered with a state update and no message; it cannot be called directly.`);
  }
  return { content: [{ type: "text", text: JSON.stringify(output) }] };
}

interface ToolMessageLike {
  content: unknown;
  status?: string | undefined;
  getType(): string;
}

function isToolMessage(value: unknown): value is ToolMessageLike {
  const getType = (value as { getType?: unknown } | null)?.getType;
  return typeof getType === "function" && (value as ToolMessageLike).getType() === "tool";
}

function toolMessageOf(output: unknown): ToolMessageLike | undefined {
  if (isToolMessage(output)) return output;
  // A Command (e.g. with a state update) carries its ToolMessage in `update.messages`.
  const update = (output as { update?: unknown } | null)?.update;
  const messages = Array.isArray(update)
    ? (update as [string, unknown][]).filter(([k]) => k === "messages").flatMap(([, v]) => (Array.isArray(v) ? v : [v]))
    : ((update as { messages?: unknown } | undefined)?.messages as unknown[] | undefined);
  return (Array.isArray(messages) ? messages : []).find(isToolMessage);
}
