import type { StructuredToolInterface } from "@langchain/core/tools";
import type { Scope } from "./di.js";

export type AntlerTool = StructuredToolInterface;

/** Where a tool came from. */
export type ToolSource = "config" | "builtin" | "mcp" | "acp" | "subagent" | "plugin";

/** One tool in the `assembleTools` waterfall, with its provenance. */
export interface ToolEntry {
  readonly tool: AntlerTool;
  /** The plugin that contributed it. */
  readonly plugin: string;
  readonly source: ToolSource;
  /** Tool group (`bash`, `file:read`, `file:write`, `web`, `browser`, ...); entries without one (framework tools) are never filtered out. */
  readonly group?: string | undefined;
}

export interface GetAvailableToolsOptions {
  /** Keep only tools in these groups, plus tools without a group. Omitted: all groups. */
  groups?: readonly string[] | undefined;
  /** Whether MCP tools are wanted (the MCP plugin reads this). Default true. */
  includeMcp?: boolean | undefined;
  /** The model the agent will run on; plugins use it for capability checks (vision, thinking). */
  modelName?: string | undefined;
  /** Whether subagent tools (`task`) are wanted. Default false. */
  subagentEnabled?: boolean | undefined;
  /** Runtime context of the run (server-owned keys such as `non_interactive` included). */
  context?: Readonly<Record<string, unknown>> | undefined;
}

export interface ToolAssemblyContext {
  /** The kernel's root DI scope, so tool factories can resolve the services their tools use. */
  readonly scope?: Scope | undefined;
  readonly groups: readonly string[] | undefined;
  readonly includeMcp: boolean;
  readonly modelName: string | undefined;
  readonly subagentEnabled: boolean;
  readonly context: Readonly<Record<string, unknown>>;
}

export function toolAssemblyContext(options: GetAvailableToolsOptions = {}, scope?: Scope): ToolAssemblyContext {
  return Object.freeze({
    ...(scope ? { scope } : {}),
    groups: options.groups ? Object.freeze([...options.groups]) : undefined,
    includeMcp: options.includeMcp ?? true,
    modelName: options.modelName,
    subagentEnabled: options.subagentEnabled ?? false,
    context: Object.freeze({ ...(options.context ?? {}) }),
  });
}

export interface ToolConflict {
  readonly name: string;
  readonly kept: { plugin: string; source: ToolSource };
  readonly dropped: { plugin: string; source: ToolSource };
}

/**
 * Applies the group filter to every tool that declares a group and resolves duplicate names: the first entry wins, and each
 * loser is reported so the caller can warn with both plugin names.
 */
export function finalizeToolEntries(
  entries: readonly ToolEntry[],
  ctx: ToolAssemblyContext,
): { entries: ToolEntry[]; conflicts: ToolConflict[] } {
  const groups = ctx.groups ? new Set(ctx.groups) : undefined;
  const byName = new Map<string, ToolEntry>();
  const conflicts: ToolConflict[] = [];
  for (const entry of entries) {
    if (groups && entry.group !== undefined && !groups.has(entry.group)) continue;
    const name = entry.tool.name;
    const existing = byName.get(name);
    if (existing) {
      conflicts.push({
        name,
        kept: { plugin: existing.plugin, source: existing.source },
        dropped: { plugin: entry.plugin, source: entry.source },
      });
      continue;
    }
    byName.set(name, entry);
  }
  return { entries: [...byName.values()], conflicts };
}
