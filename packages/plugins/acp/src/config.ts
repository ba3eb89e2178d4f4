import { AntlerError, ErrorCodes } from "@antler/kernel";
import { z } from "zod";

/** One external agent that speaks ACP over stdio (an adapter such as `codex-acp`, or an agent with an `acp` mode). */
export const acpAgentSchema = z.object({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Values may reference host variables as `$VAR` or `${VAR}`; they are resolved when the agent is spawned. */
  env: z.record(z.string(), z.string()).default({}),
  /** Shown to the model in the tool description, so it knows when to hand work to this agent. */
  description: z.string().min(1),
  /** A model hint, passed to the agent in `session/new` `_meta`. */
  model: z.string().optional(),
  auto_approve_permissions: z.boolean().default(false),
  timeout_seconds: z.number().positive().default(1800),
});

/** An MCP server handed to every ACP session (stdio only, the one transport every ACP agent must accept). */
export const acpMcpServerSchema = z.object({
  name: z.string().min(1),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
});

/** `antler acp`: Antler itself as an ACP agent on stdio. Flags on the command override these. */
export const acpServeSchema = z.object({
  /** Every ACP session is a thread of this user. */
  user: z.string().min(1).default("default"),
  /** A custom agent (`antler agents list`) to serve instead of the lead agent. */
  agent: z.string().min(1).optional(),
  /** A `models:` name for every run; default the agent's, then the config's default model. */
  model: z.string().min(1).optional(),
});

export const acpConfigSchema = z.object({
  serve: acpServeSchema.default(acpServeSchema.parse({})),
  acp_agents: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/), acpAgentSchema).default({}),
  /** Extra stdio MCP servers for ACP sessions only. */
  mcp_servers: z.array(acpMcpServerSchema).default([]),
  /**
   * Also hand every ACP session Antler's own enabled MCP servers (from `@antler/plugin-mcp`): stdio always,
   * http and sse when the agent says it supports them. Servers that need OAuth stay with Antler.
   */
  share_mcp_servers: z.boolean().default(true),
});

export type AcpAgentConfig = z.output<typeof acpAgentSchema>;
export type AcpMcpServerConfig = z.output<typeof acpMcpServerSchema>;
export type AcpConfig = z.output<typeof acpConfigSchema>;
export type AcpServeConfig = z.output<typeof acpServeSchema>;

const ENV_REF = /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g;

/**
 * Replaces `$VAR` / `${VAR}` references with values from `source`. An unset variable is an error naming it and
 * the config key, because silently passing an empty API key makes the agent fail later with a vaguer message.
 */
export function resolveEnvRefs(
  env: Readonly<Record<string, string>>,
  source: Readonly<Record<string, string | undefined>>,
  where: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, raw] of Object.entries(env)) {
    out[key] = raw.replace(ENV_REF, (_match, braced: string | undefined, bare: string | undefined) => {
      const name = braced ?? bare ?? "";
      const value = source[name];
      if (value === undefined) {
        throw new AntlerError(ErrorCodes.CONFIG_ENV_MISSING, `environment variable ${name} is not set`, {
          where: `${where}.env.${key}`,
          hint: `Export ${name} in the environment of the Antler process, or put the value in the config directly.`,
          details: { variable: name },
        });
      }
      return value;
    });
  }
  return out;
}
