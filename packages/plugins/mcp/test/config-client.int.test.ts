// McpConfigClient: the in-process twin of the gateway's MCP admin routes, over a real stdio server
// (@modelcontextprotocol/server-everything) and real agent turns with a scripted model.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isAntlerError } from "@antler/kernel";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient, RuntimeErrorCodes } from "@antler/plugin-runtime";
import { afterEach, describe, expect, it, vi } from "vitest";
import mcpPlugin, { McpConfigClient, mcpConfigResponseSchema } from "../src/index.js";
import { everythingStdio, removeTempDirs, tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  removeTempDirs();
});

async function clientWith(pluginConfig: Record<string, unknown>) {
  const cwd = tempDir();
  const scripted = scriptedModelsPlugin({ m: () => ({ text: "ok" }) });
  const client = await AntlerClient.create({
    config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
    plugins: [scripted, { plugin: mcpPlugin, config: pluginConfig }],
    cwd,
    env: {},
    discover: false,
  });
  clients.push(client);
  const toolsOfLastCall = () => scripted.models.get("m")?.calls.at(-1)?.tools ?? [];
  return { client, cwd, toolsOfLastCall };
}

describe("McpConfigClient", () => {
  it("replaces the extensions config, resets every open client's agents, and the next turn binds exactly the new servers' tools", async () => {
    const dir = tempDir();
    const file = join(dir, "extensions_config.json");
    writeFileSync(file, JSON.stringify({ mcpServers: {} }));
    const { client, toolsOfLastCall } = await clientWith({ extensions_config: file });
    const mcp = new McpConfigClient(client);
    expect(mcpConfigResponseSchema.parse(await mcp.getConfig())).toEqual({ extensions_config: file, servers: [] });

    await client.chat("hi", { threadId: "t1" });
    expect(toolsOfLastCall().filter((t) => t.startsWith("everything_"))).toEqual([]);

    const reset = vi.spyOn(client, "resetAgent");
    const { command, args } = everythingStdio();
    const status = await mcp.updateConfig({ mcpServers: { everything: { type: "stdio", command, args } } });
    expect(reset).toHaveBeenCalledTimes(1);
    expect(status.servers.map((s) => [s.name, s.origin, s.state])).toEqual([["everything", "extensions_config", "idle"]]);
    expect(JSON.parse(readFileSync(file, "utf8")).mcpServers.everything.command).toBe(command);

    await client.chat("again", { threadId: "t1" });
    expect(toolsOfLastCall()).toEqual(expect.arrayContaining(["everything_echo", "everything_get-sum"]));
    expect((await mcp.getConfig()).servers[0]).toMatchObject({ name: "everything", state: "ready" });

    // Disabled: the server contributes nothing to the next turn.
    await mcp.updateConfig({ mcpServers: { everything: { type: "stdio", command, args, enabled: false } } });
    await client.chat("once more", { threadId: "t1" });
    expect(toolsOfLastCall().filter((t) => t.startsWith("everything_"))).toEqual([]);
    expect((await mcp.getConfig()).servers[0]).toMatchObject({ name: "everything", state: "disabled" });

    expect(await mcp.resetCache()).toEqual({ reset: true });
    expect(reset).toHaveBeenCalledTimes(3);
  });

  it("refuses an invalid server before writing anything, and a plugin without an extensions file with STATE_CONFLICT", async () => {
    const dir = tempDir();
    const file = join(dir, "extensions_config.json");
    writeFileSync(file, JSON.stringify({ mcpServers: {} }));
    const { client } = await clientWith({ extensions_config: file });
    await expect(new McpConfigClient(client).updateConfig({ mcpServers: { broken: { type: "stdio" } } })).rejects.toThrow(
      /mcpServers\.broken/,
    );
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ mcpServers: {} });

    const { client: without } = await clientWith({});
    const err = await new McpConfigClient(without).updateConfig({ mcpServers: {} }).catch((e: unknown) => e);
    expect(isAntlerError(err, RuntimeErrorCodes.STATE_CONFLICT)).toBe(true);
  });
});
