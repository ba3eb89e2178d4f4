import { z } from "zod";

const userIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "1-128 letters, digits, '_' or '-'");

export const mcpServerConfigSchema = z.strictObject({
  /** The lead agent as `ask_agent`. */
  lead_agent: z.boolean().default(true).describe("Offer the lead agent as the tool `ask_agent`."),
  /** Custom agents offered as `ask_<name>`: `all` of the caller's (their own and the distribution's), or a list. */
  agents: z
    .union([z.literal("all"), z.array(z.string().regex(/^[a-z0-9-]{1,64}$/, "a custom agent name"))])
    .default("all")
    .describe("Custom agents offered as tools: \"all\" (the caller's own and the distribution's) or a list of names."),
  /** A message longer than this is refused before any run starts. */
  max_message_chars: z.number().int().positive().max(1_000_000).default(100_000),
  /** The distribution's own tools offered directly as MCP tools (no model): names, or `group:<group>`. Default none. */
  expose_tools: z
    .array(z.string().regex(/^(group:[A-Za-z0-9:_-]{1,64}|[a-zA-Z0-9_-]{1,64})$/, 'a tool name, or "group:<group>"'))
    .default([])
    .describe('Tools exposed directly as MCP tools: tool names or "group:<group>"; none unless listed.'),
  stdio: z
    .strictObject({
      /** `antler mcp serve` runs as this user: its threads, artifacts and custom agents. */
      user: userIdSchema.default("default"),
    })
    .prefault({}),
  http: z
    .strictObject({
      enabled: z.boolean().default(true).describe("Serve streamable HTTP on the gateway (behind its API-key auth)."),
      path: z
        .string()
        .regex(/^(\/[A-Za-z0-9._~-]+)+$/, 'a path such as "/mcp"')
        .refine((p) => p !== "/api" && !p.startsWith("/api/") && p !== "/health", { message: "must not be under /api or /health" })
        .default("/mcp"),
      /** A session nobody used this long is closed (its live requests cancelled); its next request is a 404. */
      session_idle_seconds: z.number().positive().max(86_400).default(900),
      /** Sessions per gateway instance; past it, the least recently used one is closed. */
      max_sessions: z.number().int().positive().max(100_000).default(1000),
      /** A POST body past this many bytes is a 413 before it is parsed. */
      max_body_bytes: z
        .number()
        .int()
        .min(1024)
        .max(64 * 1024 * 1024)
        .default(4 * 1024 * 1024),
    })
    .prefault({}),
  resources: z
    .strictObject({
      /** `resources/list` lists the artifacts of the caller's most recently active threads, this many. */
      list_threads: z.number().int().min(0).max(500).default(20),
      /** An artifact larger than this is refused by `resources/read`. */
      max_read_bytes: z
        .number()
        .int()
        .positive()
        .max(256 * 1024 * 1024)
        .default(20 * 1024 * 1024),
    })
    .prefault({}),
});

export type McpServerConfig = z.output<typeof mcpServerConfigSchema>;
