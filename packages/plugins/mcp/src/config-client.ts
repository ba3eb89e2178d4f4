import { readFile, rename, writeFile } from "node:fs/promises";
import { AntlerError, type Kernel } from "@antler/kernel";
import { RuntimeErrorCodes, resetAgents } from "@antler/plugin-runtime";
import { z } from "zod";
import type { McpToolCatalog } from "./catalog.js";
import { parseExtensionsConfig } from "./config.js";
import { MCP_TOOLS } from "./plugin.js";

/** `GET /api/mcp/config` and `McpConfigClient.getConfig()`: each server's state and tools (never env, headers or credentials). */
export const mcpConfigResponseSchema = z.object({
  extensions_config: z.string().nullable(),
  servers: z.array(
    z.object({
      name: z.string(),
      transport: z.string(),
      origin: z.string(),
      state: z.string(),
      tool_count: z.number().int(),
      tools: z.array(z.string()),
      last_error: z.string().nullable(),
    }),
  ),
});
export type McpConfigResponse = z.output<typeof mcpConfigResponseSchema>;

/** `PUT /api/mcp/config` and `McpConfigClient.updateConfig()`: the DeerFlow extensions-config shape. */
export const mcpConfigUpdateSchema = z.object({ mcpServers: z.record(z.string(), z.record(z.string(), z.unknown())) }).loose();
export type McpConfigUpdate = z.input<typeof mcpConfigUpdateSchema>;

type ServerView = McpConfigResponse["servers"][number];

/**
 * In-process twin of the gateway's MCP admin routes (`GET`/`PUT /api/mcp/config`, `POST /api/mcp/cache/reset`): the
 * same functions and response shapes; the gateway's handlers call these methods after their admin check.
 *
 * ```ts
 * const mcp = new McpConfigClient(client);
 * await mcp.updateConfig({ mcpServers: { fs: { type: "stdio", command: "npx", args: ["-y", "some-mcp-server"] } } });
 * // the next turn of every open client is built with the new servers' tools
 * ```
 */
export class McpConfigClient {
  private readonly kernel: Kernel;

  constructor(target: { kernel: Kernel } | Kernel) {
    this.kernel = "kernel" in target ? target.kernel : target;
  }

  private catalog(): McpToolCatalog {
    return this.kernel.scope.resolve(MCP_TOOLS);
  }

  /** Each server's state and tools, with the extensions file read afresh; starts no server. */
  async getConfig(): Promise<McpConfigResponse> {
    return describe(this.catalog());
  }

  /**
   * Validates `update` as the plugin will read it, writes it to the `extensions_config` file (atomically), drops the
   * catalog's sessions and every open client's cached agents, and answers the new status. A bad entry is refused
   * before anything is written; a plugin without an `extensions_config` file is `STATE_CONFLICT`.
   */
  async updateConfig(update: McpConfigUpdate): Promise<McpConfigResponse> {
    const catalog = this.catalog();
    const body = mcpConfigUpdateSchema.parse(update);
    const path = catalog.extensionsConfigPath;
    if (!path) {
      throw new AntlerError(RuntimeErrorCodes.STATE_CONFLICT, "the MCP plugin has no extensions_config file to write", {
        hint: "Set `extensions_config: extensions_config.json` in the @antler/plugin-mcp config; servers under `servers:` are edited in config.yaml.",
      });
    }
    const text = `${JSON.stringify(body, null, 2)}\n`;
    parseExtensionsConfig(text, "PUT /api/mcp/config");
    const staged = `${path}.${process.pid}.tmp`;
    await writeFile(staged, text);
    await rename(staged, path);
    await catalog.reset();
    // Agents are cached with their tools: without this the next turn would still offer the old servers' tools.
    resetAgents(this.kernel);
    return describe(catalog);
  }

  /** Drops every MCP session here and in every process on the same data folder, and the cached agents. */
  async resetCache(): Promise<{ reset: true }> {
    await this.catalog().requestReset();
    resetAgents(this.kernel);
    return { reset: true };
  }
}

/**
 * The catalog's status, with the extensions file read afresh: the catalog itself re-reads it only when it next
 * assembles tools (which would start servers), and a status read must start nothing.
 */
async function describe(catalog: McpToolCatalog): Promise<McpConfigResponse> {
  const status = catalog.status();
  const known = new Map<string, ServerView>(
    status.servers.map((s) => [
      s.name,
      {
        name: s.name,
        transport: s.transport,
        origin: s.origin,
        state: s.state,
        tool_count: s.toolCount,
        tools: [...s.tools],
        last_error: s.lastError,
      },
    ]),
  );
  const path = catalog.extensionsConfigPath;
  if (path) {
    const text = await readFile(path, "utf8").catch(() => null);
    let fromFile: Record<string, { transport: string; enabled: boolean }> = {};
    try {
      fromFile = text === null ? {} : parseExtensionsConfig(text, path);
    } catch {
      // An unusable file: the catalog's own status already reports its error.
    }
    for (const [name, entry] of known) if (entry.origin === "extensions_config" && !(name in fromFile)) known.delete(name);
    for (const [name, server] of Object.entries(fromFile)) {
      const current = known.get(name);
      if (current?.origin === "config") continue; // `servers:` in config.yaml overrides the file
      if (!current || current.transport !== server.transport) {
        known.set(name, {
          name,
          transport: server.transport,
          origin: "extensions_config",
          state: server.enabled ? "idle" : "disabled",
          tool_count: 0,
          tools: [],
          last_error: null,
        });
      }
    }
  }
  return { extensions_config: path, servers: [...known.values()] };
}
