// The middleware's edges, driven directly with the catalog registry the plugin uses.
import type { AntlerTool, ModelCallRequest, ToolCallRequestOf, ToolEntry } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toolSearchSectionSchema } from "../src/index.js";
import { toolSearchMiddleware } from "../src/middleware.js";
import { CatalogRegistry } from "../src/registry.js";

const make = (name: string): AntlerTool =>
  defineTool({ name, description: `Tool ${name}.`, schema: z.object({ x: z.string() }), run: () => `${name} ran` });
const entry = (tool: AntlerTool, source: ToolEntry["source"], group?: string): ToolEntry => ({ tool, plugin: "p", source, group });
const context = (groups?: string[]) => ({ groups, includeMcp: true, modelName: undefined, subagentEnabled: false, context: {} });

function setup() {
  const registry = new CatalogRegistry(toolSearchSectionSchema.parse({ enabled: true, deferred: ["web_*"], auto_promote_top_k: 0 }));
  const tools = { mcp: make("srv_echo"), web: make("web_fetch"), local: make("local_note"), grouped: make("srv_admin") };
  const added = registry.assemble(
    [entry(tools.mcp, "mcp"), entry(tools.web, "plugin"), entry(tools.local, "builtin"), entry(tools.grouped, "mcp", "admin")],
    context(["web"]),
  );
  return { registry, tools, search: added?.[0]?.tool as AntlerTool };
}

const modelRequest = (tools: unknown[], state: Record<string, unknown> = {}) =>
  ({
    tools,
    systemMessage: new SystemMessage("base"),
    messages: [],
    state: { messages: [new HumanMessage("hi")], ...state },
  }) as unknown as ModelCallRequest;
const toolRequest = (tool: AntlerTool, state: Record<string, unknown> = {}) =>
  ({ toolCall: { name: tool.name, args: { x: "1" }, id: "c1" }, tool, state: { messages: [], ...state } }) as unknown as ToolCallRequestOf;
const ran = (name: string) => async () => new ToolMessage({ content: `${name} ran`, tool_call_id: "c1" });

describe("tool-search middleware", () => {
  it("catalogs MCP and globbed tools that survive the group filter, and nothing else", () => {
    const { registry, search } = setup();
    expect(search.name).toBe("tool_search");
    const catalog = registry.catalogAmong([search]);
    expect(catalog?.sortedNames).toEqual(["srv_echo", "web_fetch"]);
  });

  it("adds no tool_search when nothing is deferred", () => {
    const registry = new CatalogRegistry(toolSearchSectionSchema.parse({ enabled: true }));
    expect(registry.assemble([entry(make("local_note"), "builtin")], context())).toBeUndefined();
  });

  it("binds everything and refuses nothing for an agent whose tools leave tool_search out", async () => {
    const { registry, tools } = setup();
    const spec = toolSearchMiddleware({ registry, autoPromoteTopK: 0 });
    let bound: string[] = [];
    await spec.wrapModelCall?.(modelRequest([tools.mcp, tools.local]), async (req) => {
      bound = req.tools.map((t) => String((t as { name: string }).name));
      return new AIMessage("ok");
    });
    expect(bound).toEqual(["srv_echo", "local_note"]);
    const result = await spec.wrapToolCall?.(toolRequest(tools.mcp), ran("srv_echo"));
    expect((result as ToolMessage).content).toBe("srv_echo ran");
  });

  it("refuses an unloaded deferred call even before any model call in this process (a resumed thread)", async () => {
    const { registry, tools, search } = setup();
    const spec = toolSearchMiddleware({ registry, autoPromoteTopK: 0 });
    const refused = (await spec.wrapToolCall?.(toolRequest(tools.web), ran("web_fetch"))) as ToolMessage;
    expect(refused.status).toBe("error");
    expect(refused.content).toContain("select:web_fetch");
    const hash = registry.catalogAmong([search])?.hash;
    const allowed = (await spec.wrapToolCall?.(
      toolRequest(tools.web, { promoted: { catalog_hash: hash, names: ["web_fetch"] } }),
      ran("web_fetch"),
    )) as ToolMessage;
    expect(allowed.content).toBe("web_fetch ran");
  });
});
