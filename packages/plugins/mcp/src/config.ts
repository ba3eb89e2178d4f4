import { readFileSync } from "node:fs";
import { AntlerError, ErrorCodes } from "@antler/kernel";
import { z } from "zod";

/** OAuth 2 for an HTTP/SSE server: a token is fetched before connecting and refreshed before it expires. */
export const mcpOAuthSchema = z
  .object({
    grant: z.enum(["client_credentials", "refresh_token"]),
    token_url: z.url(),
    client_id: z.string().min(1),
    client_secret: z.string().min(1).optional(),
    refresh_token: z.string().min(1).optional(),
    scope: z.string().min(1).optional(),
  })
  .superRefine((oauth, issues) => {
    if (oauth.grant === "refresh_token" && !oauth.refresh_token) {
      issues.addIssue({ code: "custom", path: ["refresh_token"], message: "the refresh_token grant needs `refresh_token`" });
    }
  });

export type McpOAuthConfig = z.output<typeof mcpOAuthSchema>;

/**
 * A long-running tool of a server that follows the job-handle pattern: `tool` starts a job and returns a handle,
 * `status_tool` and `cancel_tool` take that handle. The handle stays in Antler's store; the model never sees it.
 */
export const mcpTaskToolSchema = z.strictObject({
  /** The MCP tool that starts the job (its name on the server, without the `<server>_` prefix). */
  tool: z.string().min(1),
  /** The MCP tool that reports a job's state: `{ status, result?, error? }` as structured content or JSON text. */
  status_tool: z.string().min(1),
  /** The MCP tool that cancels a job; without it, `cancel_background_task` refuses this tool's tasks. */
  cancel_tool: z.string().min(1).optional(),
  /** Field of the start result (structured content, or its text parsed as JSON) that holds the handle. */
  handle_field: z.string().min(1).default("job_id"),
  /** Argument name under which status_tool and cancel_tool take the handle; default `handle_field`. */
  handle_arg: z.string().min(1).optional(),
});

export type McpTaskToolConfig = z.output<typeof mcpTaskToolSchema>;

/** One MCP server as configured under `servers.<name>` in the plugin config. */
export const mcpServerSchema = z
  .object({
    transport: z.enum(["stdio", "http", "sse"]).default("stdio"),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    url: z.url().optional(),
    headers: z.record(z.string(), z.string()).default({}),
    oauth: mcpOAuthSchema.optional(),
    enabled: z.boolean().default(true),
    /** `true`: tools are named `<server>_<tool>`, so two servers can offer a tool of the same name. */
    tool_name_prefix: z.boolean().default(true),
    init_timeout_seconds: z.number().positive().default(30),
    call_timeout_seconds: z.number().positive().default(120),
    /** A tool result's text beyond this many characters is cut in the middle (head and tail kept), so one call cannot flood the context. */
    result_max_chars: z.number().int().min(1000).max(1_000_000).default(40_000),
    description: z.string().optional(),
    /** Long-running tools driven in the background (durable MCP tasks). */
    tasks: z.strictObject({ tools: z.array(mcpTaskToolSchema).min(1) }).optional(),
  })
  .superRefine((server, issues) => {
    const seen = new Set<string>();
    for (const [i, t] of (server.tasks?.tools ?? []).entries()) {
      if (seen.has(t.tool))
        issues.addIssue({ code: "custom", path: ["tasks", "tools", i, "tool"], message: `tool ${t.tool} is listed twice` });
      seen.add(t.tool);
      if (t.status_tool === t.tool || t.cancel_tool === t.tool) {
        issues.addIssue({
          code: "custom",
          path: ["tasks", "tools", i],
          message: `the start tool ${t.tool} cannot also be its own status_tool or cancel_tool`,
        });
      }
    }
    if (server.transport === "stdio" && !server.command) {
      issues.addIssue({ code: "custom", path: ["command"], message: "a stdio server needs `command` (the program to spawn)" });
    }
    if (server.transport !== "stdio" && !server.url) {
      issues.addIssue({ code: "custom", path: ["url"], message: `an ${server.transport} server needs \`url\`` });
    }
    if (server.transport === "stdio" && server.oauth) {
      issues.addIssue({
        code: "custom",
        path: ["oauth"],
        message: "`oauth` applies to http and sse servers only; pass credentials to a stdio server in `env`",
      });
    }
  });

export type McpServerConfig = z.output<typeof mcpServerSchema>;

export const mcpPluginConfigSchema = z.object({
  servers: z.record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), mcpServerSchema).default({}),
  /** DeerFlow-style `extensions_config.json` (`{ "mcpServers": { ... } }`), relative to the config folder. */
  extensions_config: z.string().min(1).optional(),
  /**
   * stdio servers run one process per (server, user, thread). A session unused this long is closed (its next
   * call starts a new process); past `max_stdio_sessions`, the least recently used idle one is closed first.
   */
  stdio_sessions: z
    .strictObject({
      idle_seconds: z.number().positive().max(86_400).default(600),
      max_stdio_sessions: z.number().int().positive().max(10_000).default(64),
    })
    .default({ idle_seconds: 600, max_stdio_sessions: 64 }),
  /** The service that drives durable MCP tasks (servers with `tasks:`): polling, leases, retries, notification runs. */
  background_tasks: z
    .strictObject({
      poll_interval_seconds: z.number().positive().max(3600).default(5),
      /** A claim on one task lasts this long without renewal; a crashed instance's task is taken over after it. */
      lease_seconds: z.number().positive().max(3600).default(30),
      /** Backoff after a failed remote call: doubles from the initial delay up to the maximum (with jitter). */
      retry_initial_seconds: z.number().positive().max(3600).default(1),
      retry_max_seconds: z.number().positive().max(86_400).default(60),
      /** Consecutive failed remote calls after which a task is marked failed. */
      max_remote_failures: z.number().int().positive().max(1000).default(20),
      /** A finished task's result is kept (and shown) up to this many characters, head and tail. */
      result_max_chars: z.number().int().min(100).max(100_000).default(2000),
      /** Launch a non-interactive run on the task's thread when it finishes, so the agent reports the result. */
      notify: z.boolean().default(true),
      /** Names this instance in leases; default `<hostname>:<pid>:<random>`. Must differ between instances. */
      instance_id: z.string().min(1).max(200).optional(),
    })
    .prefault({}),
});

export type McpPluginConfig = z.output<typeof mcpPluginConfigSchema>;

export type BackgroundTasksConfig = McpPluginConfig["background_tasks"];

/** DeerFlow's `mcpServers.<name>` entry. Unknown keys (routing, oauth, ...) are tolerated and ignored. */
const extensionsServerSchema = z
  .object({
    type: z.enum(["stdio", "http", "sse"]).optional(),
    command: z.string().optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    url: z.string().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    enabled: z.boolean().optional(),
    tool_name_prefix: z.boolean().optional(),
    session_init_timeout: z.number().positive().optional(),
    tool_call_timeout: z.number().positive().optional(),
    description: z.string().optional(),
  })
  .loose();

const extensionsFileSchema = z.object({ mcpServers: z.record(z.string(), extensionsServerSchema).default({}) }).loose();

/** Parses the text of an extensions_config.json into server configs in this plugin's shape. */
export function parseExtensionsConfig(text: string, where: string): Record<string, McpServerConfig> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new AntlerError(ErrorCodes.CONFIG_PARSE, `${where} is not valid JSON: ${(err as Error).message}`, {
      hint: "Fix the JSON syntax; MCP servers from this file stay unavailable until then.",
    });
  }
  const file = extensionsFileSchema.safeParse(json);
  if (!file.success) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `${where}: ${file.error.issues[0]?.message ?? "invalid"}`, {
      where: `${where}#mcpServers`,
    });
  }
  const out: Record<string, McpServerConfig> = {};
  for (const [name, entry] of Object.entries(file.data.mcpServers)) {
    const transport = entry.type ?? (entry.command ? "stdio" : "http");
    const parsed = mcpServerSchema.safeParse({
      transport,
      command: entry.command,
      args: entry.args,
      env: entry.env,
      url: entry.url,
      headers: entry.headers,
      enabled: entry.enabled,
      tool_name_prefix: entry.tool_name_prefix,
      init_timeout_seconds: entry.session_init_timeout,
      call_timeout_seconds: entry.tool_call_timeout,
      description: entry.description,
    });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new AntlerError(ErrorCodes.CONFIG_INVALID, `${where}: mcpServers.${name}: ${issue?.message ?? "invalid"}`, {
        where: `${where}#mcpServers.${name}${issue?.path.length ? `.${issue.path.join(".")}` : ""}`,
      });
    }
    out[name] = parsed.data;
  }
  return out;
}

export function readExtensionsConfig(path: string): Record<string, McpServerConfig> {
  return parseExtensionsConfig(readFileSync(path, "utf8"), path);
}
