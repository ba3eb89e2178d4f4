// expose_tools over stdio: the compiled `antler mcp serve` as a child process (SQLite storage, the openai plugin
// against a loopback model server that these direct calls never reach, tools from a local plugin file), driven by the
// official MCP SDK client; and the same command refusing to start on an unknown name in expose_tools.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  antlerBinPath,
  antlerCliBuilt,
  loopbackModelConfig,
  type OpenAICompatibleServer,
  startOpenAICompatibleServer,
} from "@antler/kernel/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const bin = antlerBinPath();
const dists = {
  mcpServer: resolve(here, "../dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && antlerCliBuilt();

const NOTES_PLUGIN = [
  "export default ({ definePlugin, defineTool, z }) => definePlugin({",
  '  name: "notes-tools", version: "1.0.0", kernel: "^0.1.0",',
  "  setup(ctx) {",
  "    ctx.tools.add(defineTool({",
  '      name: "lookup_note", description: "Looks up a note by key.",',
  "      schema: z.object({ key: z.string().min(1), limit: z.number().int().max(10).optional() }),",
  "      run: ({ key }, { context: c }) => `note ${key} for ${c.user_id} on ${c.thread_id} trace ${c.antler_trace_id}`,",
  '    }), { group: "notes" });',
  "    ctx.tools.add(defineTool({",
  '      name: "secret_tool", description: "Never exposed.", schema: z.object({}), run: () => "secret",',
  "    }));",
  "  },",
  "});",
  "",
].join("\n");

describe.skipIf(!built)("expose_tools over stdio (compiled `antler mcp serve` in a child process; needs a build first)", () => {
  let dir: string;
  let model: OpenAICompatibleServer;
  let client: Client;
  let modelCalls = 0;

  /** A config.yaml in the test's folder with these expose_tools; returns its path. */
  function writeConfig(name: string, exposeTools: string[]): string {
    const path = join(dir, name);
    writeFileSync(
      path,
      [
        `base_dir: ${JSON.stringify(join(dir, "data"))}`,
        ...loopbackModelConfig(model.url),
        "plugins:",
        `  - path: ${JSON.stringify(dists.openai)}`,
        "  - path: ./notes-tools.mjs",
        `  - path: ${JSON.stringify(dists.mcpServer)}`,
        "    config:",
        "      stdio: { user: carol }",
        `      expose_tools: ${JSON.stringify(exposeTools)}`,
        "",
      ].join("\n"),
    );
    return path;
  }

  beforeAll(async () => {
    model = await startOpenAICompatibleServer({
      handler: () => {
        modelCalls += 1;
        return { text: "a model turn" };
      },
    });
    dir = mkdtempSync(join(tmpdir(), "antler-mcp-expose-stdio-"));
    writeFileSync(join(dir, "notes-tools.mjs"), NOTES_PLUGIN);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, "mcp", "serve", "--config", writeConfig("config.yaml", ["group:notes"])],
      cwd: dir,
      env: { ...(process.env as Record<string, string>), ANTLER_CONFIG: "" },
      stderr: "pipe",
    });
    client = new Client({ name: "mcp-expose-stdio-test", version: "1.0.0" });
    await client.connect(transport);
  }, 90_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("lists the exposed tool with its JSON Schema next to ask_agent, and not the unlisted one", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["ask_agent", "lookup_note"]);
    expect(tools[1]?.inputSchema).toMatchObject({
      type: "object",
      required: ["key"],
      properties: { key: { type: "string", minLength: 1 }, limit: { type: "integer", maximum: 10 } },
    });
  });

  it("runs the tool directly as the configured user on a new thread, without a model turn", async () => {
    const result = await client.callTool({ name: "lookup_note", arguments: { key: "k1" } });
    expect(result.isError).toBeFalsy();
    const threadId = (result._meta as Record<string, string> | undefined)?.["antler/thread_id"];
    expect(threadId).toMatch(/.+/);
    const traceId = (result._meta as Record<string, string> | undefined)?.["antler/trace_id"];
    expect(result.content).toEqual([{ type: "text", text: `note k1 for carol on ${threadId} trace ${traceId}` }]);
    expect(modelCalls).toBe(0);
  });

  it("carries the trace id Antler's MCP client sends in _meta (antler/trace_id) into the call", async () => {
    const result = await client.callTool({ name: "lookup_note", arguments: { key: "k2" }, _meta: { "antler/trace_id": "stdio-trace-7" } });
    expect((result._meta as Record<string, string> | undefined)?.["antler/trace_id"]).toBe("stdio-trace-7");
    expect((result.content as Array<{ text: string }>)[0]?.text).toMatch(/ trace stdio-trace-7$/);
  });

  it("answers bad arguments with isError and the schema's message, and an unlisted tool with -32602", async () => {
    const bad = await client.callTool({ name: "lookup_note", arguments: { limit: 50 } });
    expect(bad.isError).toBe(true);
    const text = (bad.content as Array<{ text: string }>)[0]?.text ?? "";
    expect(text).toMatch(/^Invalid arguments for tool lookup_note:/);
    expect(text).toMatch(/key/);
    expect(text).toMatch(/<=10/);
    const unlisted = await client.callTool({ name: "secret_tool", arguments: {} }).catch((e: unknown) => e);
    expect(unlisted).toBeInstanceOf(McpError);
    expect((unlisted as McpError).code).toBe(ErrorCode.InvalidParams);
  });

  it("refuses to start on an unknown name in expose_tools: exit 1, the entry and the tools that can be exposed on stderr", () => {
    const child = spawnSync(process.execPath, [bin, "mcp", "serve", "--config", writeConfig("bad.yaml", ["lookup_note", "lookup_notes"])], {
      cwd: dir,
      env: { ...(process.env as Record<string, string>), ANTLER_CONFIG: "" },
      input: "",
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(child.status).toBe(1);
    expect(child.stdout).toBe("");
    expect(child.stderr).toMatch(/expose_tools\[1\]: no tool named "lookup_notes" in this distribution/);
    expect(child.stderr).toMatch(/expose_tools\[1\]/);
    expect(child.stderr).toMatch(/Tools that can be exposed: .*lookup_note/);
  });
});
