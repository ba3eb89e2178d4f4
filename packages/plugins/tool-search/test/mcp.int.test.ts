// Deferred MCP tools end to end: a real MCP server process (@modelcontextprotocol/server-everything over stdio),
// AntlerClient with SQLite checkpoints, and a scripted model whose recorded calls show what it was prompted and bound.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KernelConfigInput } from "@antler/kernel";
import { type ScriptedCall, scriptedModelsPlugin, useTempDirs } from "@antler/kernel/testing";
import mcpPlugin from "@antler/plugin-mcp";
import { AntlerClient, type StreamEvent } from "@antler/plugin-runtime";
import { SystemMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import toolSearchPlugin from "../src/index.js";

const EVERYTHING = fileURLToPath(new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));
const temp = useTempDirs();
const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

const server = { command: process.execPath, args: [EVERYTHING, "stdio"] };
const writeServers = (file: string, servers: Record<string, unknown>) => writeFileSync(file, JSON.stringify({ mcpServers: servers }));

async function turn(c: AntlerClient, text: string) {
  const events: StreamEvent[] = [];
  for await (const e of c.stream(text, { threadId: "mcp-thread" })) events.push(e);
  return events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "tool" ? [e.data] : []));
}
const systemText = (call: ScriptedCall | undefined) => {
  const first = call?.messages[0];
  return SystemMessage.isInstance(first) ? first.text : "";
};
const mcpBound = (call: ScriptedCall | undefined) =>
  (call?.tools ?? []).filter((t) => t.startsWith("everything_") || t.startsWith("second_"));

describe("tool_search over a real MCP server", () => {
  it("hides MCP schemas until tool_search loads them, keeps them across turns, and drops them when the server's tools change", async () => {
    const cwd = temp.tempDir("antler-tool-search-mcp-");
    const extensions = join(cwd, "extensions_config.json");
    writeServers(extensions, { everything: server });
    const scripted = scriptedModelsPlugin({
      m: [
        // Turn 1: a guess at a tool it was never shown, then a search, then the call.
        { toolCalls: [{ name: "everything_get-sum", args: { a: 1, b: 2 }, id: "c-guess" }] },
        { toolCalls: [{ name: "tool_search", args: { query: "+everything sum numbers" }, id: "c-search" }] },
        { toolCalls: [{ name: "everything_get-sum", args: { a: 19, b: 23 }, id: "c-sum" }] },
        { text: "42" },
        // Turn 2: the tool is still loaded.
        { toolCalls: [{ name: "everything_get-sum", args: { a: 2, b: 3 }, id: "c-sum-2" }] },
        { text: "5" },
        // Turn 3, after a second server joined: the old promotion is gone until loaded again.
        { toolCalls: [{ name: "everything_get-sum", args: { a: 4, b: 4 }, id: "c-stale" }] },
        { toolCalls: [{ name: "tool_search", args: { query: "select:everything_get-sum,second_echo" }, id: "c-reload" }] },
        { toolCalls: [{ name: "second_echo", args: { message: "back" }, id: "c-echo" }] },
        { text: "done" },
      ],
    });
    const client = await AntlerClient.create({
      config: {
        models: [{ name: "m", provider: "scripted" }],
        storage: { backend: "sqlite" },
        title: { enabled: false },
        tool_search: { enabled: true, auto_promote_top_k: 0, max_results: 2 },
      } as KernelConfigInput,
      plugins: [scripted, { plugin: mcpPlugin, config: { extensions_config: "extensions_config.json" } }, toolSearchPlugin],
      cwd,
      env: {},
      discover: false,
    });
    clients.push(client);
    const calls = () => scripted.models.get("m")?.calls ?? [];

    const first = await turn(client, "What is 19 + 23?");
    const prompt = systemText(calls()[0]);
    const listed = prompt.match(/^everything_\S+$/gm) ?? [];
    expect(listed.length).toBeGreaterThanOrEqual(10);
    expect(listed).toEqual(expect.arrayContaining(["everything_echo", "everything_get-sum"]));
    expect(calls()[0]?.tools).toContain("tool_search");
    expect(mcpBound(calls()[0])).toEqual([]);
    expect(mcpBound(calls()[1])).toEqual([]);
    expect(first.map((t) => [t.tool_call_id, t.status])).toEqual([
      ["c-guess", "error"],
      ["c-search", "success"],
      ["c-sum", "success"],
    ]);
    expect(first[0]?.content).toContain('Call tool_search with "select:everything_get-sum" first');
    // "+everything sum numbers": the get-sum tool ranks first; its real JSON schema comes back.
    expect(first[1]?.content).toMatch(/^Loaded 2 tools, callable now: everything_get-sum, /);
    expect(first[1]?.content).toContain('"name":"everything_get-sum"');
    expect(first[2]?.content).toBe("The sum of 19 and 23 is 42.");
    expect(mcpBound(calls()[2])).toContain("everything_get-sum");
    expect(mcpBound(calls()[2])).toHaveLength(2);

    const second = await turn(client, "And 2 + 3?");
    expect(mcpBound(calls()[4])).toContain("everything_get-sum");
    expect(second.map((t) => [t.tool_call_id, t.status, t.content])).toEqual([["c-sum-2", "success", "The sum of 2 and 3 is 5."]]);

    writeServers(extensions, { everything: server, second: server });
    const third = await turn(client, "Again with the new server");
    expect(mcpBound(calls()[6])).toEqual([]);
    expect(systemText(calls()[6])).toMatch(/^second_echo$/m);
    expect(third.map((t) => [t.tool_call_id, t.status])).toEqual([
      ["c-stale", "error"],
      ["c-reload", "success"],
      ["c-echo", "success"],
    ]);
    expect(third[0]?.content).toContain("the tool catalog has changed since");
    expect(mcpBound(calls()[8]).sort()).toEqual(["everything_get-sum", "second_echo"]);
    expect(third[2]?.content).toBe("Echo: back");
  });
});
