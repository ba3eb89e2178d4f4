import { cassettePlugin } from "../cassette/index.js";
import { AntlerError, ErrorCodes } from "../errors.js";
import type { MiddlewareAssemblyContext, MiddlewareSpec } from "../pipeline/types.js";
import { type AntlerPlugin, definePlugin } from "../plugin.js";
import { KERNEL_VERSION } from "../version.js";
import { clarificationMiddleware, isClarificationAllowed } from "./clarification.js";
import { configToolsPlugin } from "./config-tools.js";
import { danglingToolCallMiddleware } from "./dangling-tool-call.js";
import { llmErrorHandlingMiddleware, toolErrorHandlingMiddleware } from "./error-handling.js";
import { loopDetectionMiddleware } from "./loop-detection.js";
import { summarizationMiddleware } from "./summarization.js";
import { threadDataMiddleware } from "./thread-data.js";
import { titleMiddleware } from "./title.js";
import { todoMiddleware } from "./todo.js";
import { tokenUsageMiddleware } from "./token-usage.js";
import { createPresentFilesTool, createSetupAgentTool, createUpdateAgentTool, createViewImageTool } from "./tools/index.js";
import { uploadsMiddleware } from "./uploads.js";
import { viewImageMiddleware } from "./view-image.js";

const RANGE = `^${KERNEL_VERSION}`;

/**
 * One built-in plugin per default-chain middleware. They use the same public API as a third-party plugin
 * (`ctx.middleware.add`); the kernel only gives them bare names and their default-chain positions.
 */
function middlewarePlugin(
  id: string,
  name: string,
  create: (
    ctx: Parameters<AntlerPlugin["setup"]>[0],
    assembly: MiddlewareAssemblyContext,
  ) => MiddlewareSpec | null | Promise<MiddlewareSpec | null>,
): AntlerPlugin {
  return definePlugin({
    name: `@antler/kernel/${id}`,
    version: KERNEL_VERSION,
    kernel: RANGE,
    description: `Built-in ${name} middleware.`,
    setup(ctx) {
      ctx.middleware.add({ name, create: (assembly) => create(ctx, assembly) });
    },
  }) as AntlerPlugin;
}

export function builtinPlugins(): AntlerPlugin[] {
  return [
    middlewarePlugin("thread-data", "ThreadData", (ctx) => threadDataMiddleware({ baseDir: ctx.paths.baseDir })),
    middlewarePlugin("uploads", "Uploads", (ctx) => uploadsMiddleware({ baseDir: ctx.paths.baseDir })),
    middlewarePlugin("dangling-tool-call", "DanglingToolCall", () => danglingToolCallMiddleware()),
    middlewarePlugin("llm-error-handling", "LLMErrorHandling", (ctx) =>
      ctx.kernelConfig.llm_error_handling.enabled ? llmErrorHandlingMiddleware() : null,
    ),
    middlewarePlugin("tool-error-handling", "ToolErrorHandling", () => toolErrorHandlingMiddleware()),
    middlewarePlugin("summarization", "Summarization", async (ctx, a) => {
      const s = ctx.kernelConfig.summarization;
      if (!s.enabled) return null;
      const model = s.model_name ? await ctx.models.create(s.model_name) : a.model;
      return summarizationMiddleware({
        model,
        triggerTokens: s.trigger_tokens,
        keepMessages: s.keep_messages,
        targetTokens: s.target_tokens,
      });
    }),
    middlewarePlugin("todo", "Todo", (ctx) => (ctx.kernelConfig.todo.enabled ? todoMiddleware() : null)),
    middlewarePlugin("title", "Title", async (ctx, a) => {
      const t = ctx.kernelConfig.title;
      // A subagent's run has no thread of its own to name; a title call would only cost a model call.
      if (!t.enabled || a.subagent) return null;
      const model = t.model_name ? await ctx.models.create(t.model_name) : a.model;
      return titleMiddleware({ model, maxWords: t.max_words, maxChars: t.max_chars });
    }),
    middlewarePlugin("view-image", "ViewImage", (ctx, a) =>
      a.modelInfo?.supportsVision ? viewImageMiddleware({ baseDir: ctx.paths.baseDir }) : null,
    ),
    middlewarePlugin("loop-detection", "LoopDetection", (ctx) => {
      const l = ctx.kernelConfig.loop_detection;
      return l.enabled
        ? loopDetectionMiddleware({ warnThreshold: l.warn_threshold, hardLimit: l.hard_limit, windowSize: l.window_size })
        : null;
    }),
    middlewarePlugin("token-usage", "TokenUsage", (ctx) =>
      ctx.kernelConfig.token_usage.enabled ? tokenUsageMiddleware({ logger: ctx.logger }) : null,
    ),
    // Unattended runs (`non_interactive`) keep the middleware but not the tool: nobody would answer.
    middlewarePlugin("clarification", "Clarification", (_ctx, a) => {
      const spec = clarificationMiddleware();
      return isClarificationAllowed(a.context) ? spec : { ...spec, tools: [] };
    }),
    builtinToolsPlugin(),
    configToolsPlugin(),
    cassettePlugin as AntlerPlugin,
  ];
}

/** present_files always; view_image for vision models; setup_agent in bootstrap runs; update_agent for custom agents. */
function builtinToolsPlugin(): AntlerPlugin {
  return definePlugin({
    name: "@antler/kernel/tools",
    version: KERNEL_VERSION,
    kernel: RANGE,
    description: "Built-in tools: present_files, view_image, setup_agent, update_agent.",
    setup(ctx) {
      const baseDir = ctx.paths.baseDir;
      const presentFiles = createPresentFilesTool({ baseDir });
      const viewImage = createViewImageTool({ baseDir });
      const setupAgent = createSetupAgentTool({ baseDir });
      const updateAgent = createUpdateAgentTool({ baseDir });
      const models = ctx.kernelConfig.models;
      ctx.tools.add(presentFiles, { source: "builtin" });
      ctx.tools.add(
        (a) =>
          models.find((m) => m.name === (a.modelName ?? ctx.kernelConfig.default_model ?? models[0]?.name))?.supports_vision
            ? viewImage
            : null,
        {
          source: "builtin",
        },
      );
      ctx.tools.add((a) => (a.context.is_bootstrap === true ? setupAgent : null), { source: "builtin" });
      ctx.tools.add((a) => (typeof a.context.agent_name === "string" && a.context.is_bootstrap !== true ? updateAgent : null), {
        source: "builtin",
      });
    },
  }) as AntlerPlugin;
}

export function assertNoBuiltinName(name: string, where: string): void {
  if (name.startsWith("@antler/kernel/")) {
    throw new AntlerError(ErrorCodes.PLUGIN_INVALID_MANIFEST, `plugin name "${name}" is reserved for the kernel's built-ins`, { where });
  }
}
