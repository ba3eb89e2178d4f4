import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import mcpPlugin, { mcpConfigResponseSchema } from "@antler/plugin-mcp";
import { describe, expect, it } from "vitest";
import { BOB_KEY, startTestGateway, tempDir } from "./fixtures.js";

describe("MCP routes", () => {
  it("do not exist when @antler/plugin-mcp is not loaded", async () => {
    const gw = await startTestGateway();
    expect((await gw.call("/api/mcp/config")).status).toBe(404);
    expect((await gw.call("/api/mcp/cache/reset", { method: "POST" })).status).toBe(404);
  });

  it("read the MCP status, let an admin replace the extensions config (validated first) and reset the cache", async () => {
    const dir = tempDir();
    const file = join(dir, "extensions_config.json");
    writeFileSync(file, JSON.stringify({ mcpServers: {} }));
    const gw = await startTestGateway({
      plugins: [{ plugin: mcpPlugin, config: { extensions_config: file } }],
      config: {
        auth: {
          mode: "api_keys",
          api_keys: [
            { key: "alice-key-0123456789abcdef", user: "alice" },
            { key: "bob-key-0123456789abcdef01", user: "bob" },
          ],
          admins: ["alice"],
        },
      },
    });
    const status = mcpConfigResponseSchema.parse(await (await gw.call("/api/mcp/config")).json());
    expect(status).toEqual({ extensions_config: file, servers: [] });

    const update = { mcpServers: { echo: { type: "stdio", command: "node", args: ["server.js"], env: { TOKEN: "s3cret-value" } } } };
    const forbidden = await gw.call("/api/mcp/config", { key: BOB_KEY, method: "PUT", json: update });
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as { error: { hint: string } }).error.hint).toContain("auth.admins");

    const invalid = await gw.call("/api/mcp/config", { method: "PUT", json: { mcpServers: { broken: { type: "stdio" } } } });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { message: string } }).error.message).toContain("mcpServers.broken");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ mcpServers: {} });

    const updated = await gw.call("/api/mcp/config", { method: "PUT", json: update });
    expect(updated.status).toBe(200);
    const body = mcpConfigResponseSchema.parse(await updated.json());
    expect(body.servers.map((s) => [s.name, s.transport, s.origin, s.state])).toEqual([["echo", "stdio", "extensions_config", "idle"]]);
    // The status never echoes env or headers.
    expect(JSON.stringify(body)).not.toContain("s3cret-value");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(update);

    expect(await (await gw.call("/api/mcp/cache/reset", { method: "POST" })).json()).toEqual({ reset: true });
    expect((await gw.call("/api/mcp/cache/reset", { key: BOB_KEY, method: "POST" })).status).toBe(403);
  });
});
