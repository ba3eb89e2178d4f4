// What a plugin module that default-exports a function receives: the authoring API, without LangChain, so that
// loading such a plugin (`antler config check`, `plugins list`) costs a few files, not LangChain's few hundred.
import { z } from "zod";
import type * as Authoring from "./authoring-core.js";
import { emitCustomEvent } from "./custom-events.js";
import { createToken } from "./di.js";
import { AntlerError, ErrorCodes } from "./errors.js";
import { resolveVirtualPath, threadPaths } from "./paths.js";
import { definePlugin } from "./plugin.js";
import { type AntlerTool, checkToolDefinition } from "./tools.js";

let authoring: typeof Authoring | undefined;
/** Loads `@antler/kernel/authoring` (LangChain's tool and message classes) once: `kernel.start()` and the first tool build do. */
export const loadAuthoring = async () => (authoring ??= await import("./authoring-core.js"));

/** A helper that answers during a run, by which time `kernel.start()` has loaded the authoring module. */
const duringRuns = <K extends "refuseToolCall" | "endTurn" | "hookContext">(name: K) =>
  ((...args: unknown[]) => {
    if (!authoring) throw new AntlerError(ErrorCodes.KERNEL_STATE, `${name} answers during a run; start the kernel first`);
    return (authoring[name] as (...a: unknown[]) => unknown)(...args);
  }) as (typeof Authoring)[K];

/**
 * The authoring API of a single-file plugin with no dependencies of its own. `defineTool` checks the definition
 * now and returns a factory for `ctx.tools.add` that builds the LangChain tool on the first assembly (listings
 * name it without building it); `@antler/kernel/authoring`'s own `defineTool` builds at once.
 */
export const pluginAuthoringApi = Object.freeze({
  definePlugin,
  defineTool<S extends z.ZodObject>(def: Authoring.ToolDefinition<S>): ((..._: unknown[]) => Promise<AntlerTool>) & { toolName: string } {
    checkToolDefinition(def);
    let built: AntlerTool | undefined;
    return Object.assign(async () => (built ??= (await loadAuthoring()).defineTool(def)), { toolName: def.name });
  },
  createToken,
  z,
  threadPaths,
  resolveVirtualPath,
  emitCustomEvent,
  refuseToolCall: duringRuns("refuseToolCall"),
  endTurn: duringRuns("endTurn"),
  hookContext: duringRuns("hookContext"),
});
export type PluginAuthoringApi = typeof pluginAuthoringApi;
