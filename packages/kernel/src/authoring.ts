// `@antler/kernel/authoring`: what plugin code uses to build tools. A subpath of its own because it loads
// LangChain's tool classes and zod, which importing the kernel itself must not.
import { tool as langchainTool, type ToolRuntime } from "@langchain/core/tools";
import { z } from "zod";
import { emitCustomEvent } from "./custom-events.js";
import { createToken } from "./di.js";
import { AntlerError, ErrorCodes } from "./errors.js";
import { resolveVirtualPath, threadPaths } from "./paths.js";
import { definePlugin } from "./plugin.js";
import type { AntlerTool } from "./tools.js";

export interface ToolDefinition<S extends z.ZodObject> {
  name: string;
  description: string;
  schema: S;
  /** End the agent turn with this tool's result (LangChain `returnDirect`). */
  returnDirect?: boolean;
  run(args: z.output<S>, runtime: ToolRuntime): unknown;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Builds a LangChain tool whose arguments are validated by a zod schema before `run` sees them. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): AntlerTool {
  if (!TOOL_NAME.test(def.name ?? "")) {
    throw new AntlerError(ErrorCodes.TOOL_INVALID, `tool name "${String(def.name)}" is not valid`, {
      hint: "Tool names are 1–64 characters of letters, digits, _ and -; model providers reject anything else.",
    });
  }
  if (typeof def.description !== "string" || def.description.trim() === "") {
    throw new AntlerError(ErrorCodes.TOOL_INVALID, "a tool needs a description; the model reads it to decide when to call", {
      where: `tool "${def.name}"`,
    });
  }
  const run = def.run as (args: unknown, runtime: ToolRuntime) => unknown;
  const make = langchainTool as unknown as (
    fn: (args: unknown, runtime: ToolRuntime) => unknown,
    fields: { name: string; description: string; schema: z.ZodObject; returnDirect?: boolean },
  ) => AntlerTool;
  return make((args, runtime) => run(args, runtime), {
    name: def.name,
    description: def.description,
    schema: def.schema,
    ...(def.returnDirect ? { returnDirect: true } : {}),
  });
}

/**
 * What a function default export receives, so that a plugin written as a single plain `.js` file with no
 * dependencies of its own can still use zod and the plugin helpers of the kernel that loads it.
 */
export const pluginAuthoringApi = Object.freeze({
  definePlugin,
  defineTool,
  createToken,
  z,
  threadPaths,
  resolveVirtualPath,
  emitCustomEvent,
});
export type PluginAuthoringApi = typeof pluginAuthoringApi;
