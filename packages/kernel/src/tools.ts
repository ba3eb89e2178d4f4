import type { StructuredToolInterface, ToolRuntime } from "@langchain/core/tools";
import type { z } from "zod";
import type { Scope } from "./di.js";
import { AntlerError, ErrorCodes } from "./errors.js";

export type AntlerTool = StructuredToolInterface;

/** What `defineTool` (`@antler/kernel/authoring`) takes. */
export interface ToolDefinition<S extends z.ZodObject> {
  name: string;
  description: string;
  schema: S;
  /** End the agent turn with this tool's result (LangChain `returnDirect`). */
  returnDirect?: boolean;
  run(args: z.output<S>, runtime: ToolRuntime): unknown;
}

/** Builds a `defineTool` stand-in (authoring-api.ts). */
export const BUILD = Symbol.for("antler.tool.build");
/** The tool a `tools.add` entry stands for: a `defineTool` stand-in built, any other tool as it is. */
export const builtTool = async (tool: AntlerTool): Promise<AntlerTool> =>
  (await (tool as { [BUILD]?: () => Promise<AntlerTool> })[BUILD]?.()) ?? tool;

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
  /** Declared by its contribution (`idempotent: true`): safe to run again after a takeover. */
  readonly idempotent?: boolean | undefined;
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

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** A tool definition's name and description, checked where it is written rather than when the tool is built. */
export function checkToolDefinition(def: { name?: unknown; description?: unknown }): void {
  if (!TOOL_NAME.test(String(def.name ?? ""))) {
    throw new AntlerError(ErrorCodes.TOOL_INVALID, `tool name "${String(def.name)}" is not valid`, {
      hint: "Tool names are 1–64 characters of letters, digits, _ and -; model providers reject anything else.",
    });
  }
  if (typeof def.description !== "string" || def.description.trim() === "") {
    throw new AntlerError(ErrorCodes.TOOL_INVALID, "a tool needs a description; the model reads it to decide when to call", {
      where: `tool "${String(def.name)}"`,
    });
  }
}
