import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/authoring.js";
import { definePlugin, type PluginContext, type ToolContribution } from "../src/index.js";
import { createTestKernel } from "../src/testing/index.js";

const tool = (name: string) => defineTool({ name, description: `the ${name} tool`, schema: z.object({}), run: () => name });
const p = (name: string, setup: (ctx: PluginContext) => void) => definePlugin({ name, version: "1.0.0", kernel: "^0.1.0", setup });
const adds = (name: string, tools: Array<[string, ToolContribution?]>) =>
  p(name, (ctx) => {
    for (const [t, o] of tools) ctx.tools.add(tool(t), o);
  });

describe("getAvailableTools", () => {
  it("assembles config tools, built-ins, MCP, ACP and subagent tools in that order, whatever the plugin order", async () => {
    const kernel = await createTestKernel({
      builtins: false,
      plugins: [
        adds("subagents", [["task", { source: "subagent" }]]),
        adds("acp", [["invoke_acp_agent", { source: "acp" }]]),
        adds("mcp", [["fs_read", { source: "mcp" }]]),
        adds("builtins", [["present_files", { source: "builtin" }]]),
        adds("configured", [["web_search", { source: "config", group: "web" }]]),
      ],
    });
    expect((await kernel.getAvailableTools()).map((t) => t.name)).toEqual([
      "web_search",
      "present_files",
      "fs_read",
      "invoke_acp_agent",
      "task",
    ]);
  });

  it("filters every tool that declares a group, whatever its source, and keeps tools without one", async () => {
    const kernel = await createTestKernel({
      builtins: false,
      plugins: [
        adds("configured", [
          ["web_search", { source: "config", group: "web" }],
          ["shell", { source: "config", group: "bash" }],
        ]),
        adds("sandbox", [
          ["bash", { group: "bash" }],
          ["read_file", { group: "file:read" }],
          ["write_file", { group: "file:write" }],
        ]),
        adds("browser", [["browser_navigate", { group: "browser" }]]),
        adds("framework", [
          ["present_files", { source: "builtin" }],
          ["ask_clarification", { source: "builtin" }],
        ]),
      ],
    });
    expect((await kernel.getAvailableTools({ groups: ["web"] })).map((t) => t.name)).toEqual([
      "web_search",
      "present_files",
      "ask_clarification",
    ]);
    expect((await kernel.getAvailableTools({ groups: ["file:read", "browser"] })).map((t) => t.name)).toEqual([
      "present_files",
      "ask_clarification",
      "read_file",
      "browser_navigate",
    ]);
    expect((await kernel.getAvailableTools()).map((t) => t.name)).toHaveLength(8);
  });

  it("keeps the first of two tools with one name and warns naming both plugins", async () => {
    const kernel = await createTestKernel({
      builtins: false,
      plugins: [adds("first-plugin", [["web_search"]]), adds("second-plugin", [["web_search"]])],
    });
    const entries = await kernel.assembleTools();
    expect(entries.map((e) => [e.tool.name, e.plugin])).toEqual([["web_search", "first-plugin"]]);
    const warning = kernel.logs.find((l) => l.level === "warn");
    expect(warning?.msg).toContain("second-plugin");
    expect(warning?.msg).toContain("first-plugin");
  });

  it("lets a factory decide per assembly, e.g. from the model name or run context", async () => {
    const kernel = await createTestKernel({
      builtins: false,
      plugins: [
        p("vision", (ctx) => ctx.tools.add((a) => (a.modelName === "gpt-4o" ? tool("view_image") : null))),
        p("clarify", (ctx) => ctx.tools.add((a) => (a.context.non_interactive ? null : tool("ask_clarification")))),
      ],
    });
    expect((await kernel.getAvailableTools({ modelName: "gpt-4o" })).map((t) => t.name)).toEqual(["view_image", "ask_clarification"]);
    expect((await kernel.getAvailableTools({ modelName: "small", context: { non_interactive: true } })).map((t) => t.name)).toEqual([]);
  });

  it("passes the assembly options to plugins that tap assembleTools directly", async () => {
    const seen: unknown[] = [];
    const kernel = await createTestKernel({
      builtins: false,
      plugins: [
        p("mcp", (ctx) =>
          ctx.hooks.assembleTools.tap((tools, a) => {
            seen.push({ includeMcp: a.includeMcp, subagentEnabled: a.subagentEnabled, groups: a.groups });
            return a.includeMcp ? [...tools, { tool: tool("mcp_echo"), plugin: "mcp", source: "mcp" }] : tools;
          }),
        ),
      ],
    });
    expect((await kernel.getAvailableTools({ includeMcp: false })).map((t) => t.name)).toEqual([]);
    expect((await kernel.getAvailableTools({ subagentEnabled: true, groups: ["x"] })).map((t) => t.name)).toEqual(["mcp_echo"]);
    expect(seen).toEqual([
      { includeMcp: false, subagentEnabled: false, groups: undefined },
      { includeMcp: true, subagentEnabled: true, groups: ["x"] },
    ]);
  });

  it("rejects a tool with a name model providers would refuse", () => {
    expect(() => tool("has space")).toThrow(/not valid/);
  });

  it("validates tool arguments before running the tool", async () => {
    const adder = defineTool({
      name: "add",
      description: "adds",
      schema: z.object({ a: z.number(), b: z.number() }),
      run: ({ a, b }) => String(a + b),
    });
    expect(await adder.invoke({ a: 1, b: 2 })).toBe("3");
    await expect(adder.invoke({ a: "1", b: 2 } as never)).rejects.toThrow();
  });
});
