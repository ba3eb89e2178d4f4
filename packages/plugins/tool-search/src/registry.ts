import type { AntlerTool, ToolAssemblyContext, ToolEntry } from "@antler/kernel";
import { DeferredToolCatalog, globToRegExp } from "./catalog.js";
import type { ToolSearchSection } from "./config.js";
import { TOOL_SEARCH, toolSearchTool } from "./tool.js";

const MAX_CACHED_CATALOGS = 32;

/**
 * One per plugin instance (per kernel): which tools are deferred, and the catalog each `tool_search` tool was
 * built over. The middleware finds its agent's catalog through the `tool_search` tool among the agent's tools,
 * because an agent's tools and its middleware are assembled separately.
 */
export class CatalogRegistry {
  private readonly globs: readonly RegExp[];
  private readonly byTool = new WeakMap<object, DeferredToolCatalog>();
  private readonly byDeferredTool = new WeakMap<object, DeferredToolCatalog>();
  private readonly byHash = new Map<string, { catalog: DeferredToolCatalog; tool: AntlerTool }>();

  constructor(readonly section: ToolSearchSection) {
    this.globs = section.deferred.map(globToRegExp);
  }

  /** Whether an assembled tool is deferred: an MCP tool (with `defer_mcp`), or named by `deferred`. */
  isDeferred(entry: ToolEntry): boolean {
    const name = entry.tool.name;
    if (name === TOOL_SEARCH) return false;
    if (this.section.defer_mcp && entry.source === "mcp") return true;
    return this.globs.some((g) => g.test(name));
  }

  /**
   * The `assembleTools` contribution (stage `last`): the catalog of the deferred tools this assembly will return
   * (after the group filter and name de-duplication the kernel applies next), and the `tool_search` tool over it.
   */
  assemble(entries: readonly ToolEntry[], context: ToolAssemblyContext): ToolEntry[] | undefined {
    const groups = context.groups ? new Set(context.groups) : undefined;
    const seen = new Set<string>();
    const deferred: AntlerTool[] = [];
    for (const entry of entries) {
      if (groups && entry.group !== undefined && !groups.has(entry.group)) continue;
      if (seen.has(entry.tool.name)) continue;
      seen.add(entry.tool.name);
      if (this.isDeferred(entry)) deferred.push(entry.tool);
    }
    if (deferred.length === 0 || seen.has(TOOL_SEARCH)) return undefined;
    const { catalog, tool } = this.toolFor(new DeferredToolCatalog(deferred));
    for (const t of deferred) this.byDeferredTool.set(t, catalog);
    return [{ tool, plugin: "@antler/plugin-tool-search", source: "plugin" }];
  }

  /** The `tool_search` tool for a catalog; an identical catalog (same hash) reuses the tool built for it. */
  toolFor(catalog: DeferredToolCatalog): { catalog: DeferredToolCatalog; tool: AntlerTool } {
    const cached = this.byHash.get(catalog.hash);
    if (cached) {
      // Most recently used last, so the oldest goes first when the cache is full.
      this.byHash.delete(catalog.hash);
      this.byHash.set(catalog.hash, cached);
      return cached;
    }
    const tool = toolSearchTool(catalog, this.section.max_results);
    const built = { catalog, tool };
    this.byTool.set(tool, catalog);
    this.byHash.set(catalog.hash, built);
    if (this.byHash.size > MAX_CACHED_CATALOGS) this.byHash.delete(this.byHash.keys().next().value as string);
    return built;
  }

  /** The catalog of the `tool_search` tool among a model call's tools. */
  catalogAmong(tools: readonly unknown[]): DeferredToolCatalog | undefined {
    for (const tool of tools) {
      if (tool !== null && typeof tool === "object" && (tool as { name?: unknown }).name === TOOL_SEARCH) {
        const catalog = this.byTool.get(tool);
        if (catalog) return catalog;
      }
    }
    return undefined;
  }

  /** The catalog a deferred tool was last assembled into (for a tool call that no model call in this process preceded). */
  catalogOfDeferred(tool: unknown): DeferredToolCatalog | undefined {
    return tool !== null && typeof tool === "object" ? this.byDeferredTool.get(tool) : undefined;
  }
}
