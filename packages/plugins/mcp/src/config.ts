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
  })
  .superRefine((server, issues) => {
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
});

export type McpPluginConfig = z.output<typeof mcpPluginConfigSchema>;

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
