import {
  type AntlerTool,
  DEFAULT_USER_ID,
  type DefaultSlotName,
  definePlugin,
  KERNEL_VERSION,
  type MiddlewareAssemblyContext,
  type MiddlewareSpec,
  type PluginContext,
  type Sandbox,
} from "@antler/kernel";
import { configToolModule, contextWindowOf, runtimeConfig, runtimeConfigSections, summarizationBudget } from "./config.js";
import { provideBudgetAdmission, provideModelCallPlanning } from "./model-calls.js";

const NAME = "@antler/plugin-runtime";
type Middleware = typeof import("./middleware/index.js");
type Tools = typeof import("./tools/index.js");

/**
 * Antler's agent runtime as a plugin: it fills every slot of the default chain, adds the built-in tools and the
 * `tools:` of config.yaml, and contributes `antler run` and `antler chat`. It registers through the same API a
 * third party uses, and loads its middleware, tools and LangChain only when the first agent is built, so loading
 * it for `antler config check` or `antler mcp status` costs nothing.
 */
export default definePlugin({
  name: NAME,
  version: "0.1.0",
  kernel: `^${KERNEL_VERSION}`,
  description: "The agent runtime: default middlewares, built-in tools, AntlerClient, antler run/chat.",
  configSections: runtimeConfigSections,
  setup(ctx) {
    fillDefaultChain(ctx);
    addBuiltinTools(ctx);
    addConfigTools(ctx);
    provideModelCallPlanning(ctx);
    provideBudgetAdmission(ctx);
    ctx.commands.add({
      name: "run",
      summary: "Run one turn and stream it: text as it comes, tool calls with their outcome, presented files.",
      usage:
        'antler run "<prompt>" [--thread id] [--config path] [--model name] [--agent name [--bootstrap]] [--thinking | --no-thinking] [--reasoning-effort minimal|low|medium|high] [--events] [-v]',
      run: async (args, io) => (await import("./cli/commands.js")).runCommand(args, io),
    });
    ctx.commands.add({
      name: "chat",
      summary: "Chat interactively on one thread (/exit to leave).",
      usage:
        "antler chat [--thread id] [--config path] [--model name] [--agent name [--bootstrap]] [--thinking | --no-thinking] [--reasoning-effort minimal|low|medium|high] [--events] [-v]",
      run: async (args, io) => (await import("./cli/commands.js")).chatCommand(args, io),
    });
    for (const [action, summary, usage] of [
      ["list", "List the custom agents you can select (yours, then those shipped with the distribution).", "[--user id] [--json]"],
      ["show", "Show a custom agent: description, model, tool groups, skills and its SOUL.md.", "<name> [--user id] [--json]"],
      ["rm", "Delete one of your custom agents.", "<name> [--user id]"],
    ] as const) {
      ctx.commands.add({
        name: `agents ${action}`,
        summary,
        usage: `antler agents ${action} ${usage}`,
        run: async (args, io) => (await import("./cli/commands.js")).agentsCommand(action, args, io),
      });
    }
    ctx.commands.add({
      name: "runs list",
      summary: "List runs in one status across threads (pending, running, paused, ...); a paused run shows what it waits for.",
      options: {
        status: { choices: ["pending", "running", "paused", "success", "error", "cancelled"], required: true },
        user: { short: "u", placeholder: "id", description: "Whose runs; default: the CLI's user." },
        "all-users": { type: "boolean", description: "Every user's runs." },
        limit: { type: "integer", placeholder: "n", description: "At most this many runs (at least 1)." },
        json: { type: "boolean", description: "Print them as JSON." },
      },
      run: async (_args, io) => (await import("./cli/commands.js")).runsListCommand(io),
    });
    ctx.commands.add({
      name: "plugin new",
      summary: "Write a new plugin package: a tool, a middleware, and a test (conformance kit + a scripted turn) that passes.",
      usage: "antler plugin new <name> [--dir <path>]",
      run: async (args, io) => (await import("./cli/plugin-new.js")).pluginNewCommand(args, io),
    });
  },
});

function fillDefaultChain(ctx: PluginContext): void {
  const fill = (
    slot: DefaultSlotName,
    create: (m: Middleware, assembly: MiddlewareAssemblyContext) => MiddlewareSpec | null | Promise<MiddlewareSpec | null>,
  ) => ctx.middleware.add({ name: slot, create: async (assembly) => create(await import("./middleware/index.js"), assembly) }, { slot });
  const config = runtimeConfig(ctx.kernelConfig);
  const baseDir = ctx.paths.baseDir;
  fill("ThreadData", (m) => m.threadDataMiddleware({ baseDir }));
  fill("Uploads", (m) => m.uploadsMiddleware({ baseDir }));
  fill("DanglingToolCall", (m) => m.danglingToolCallMiddleware());
  fill("LLMErrorHandling", (m) => (config.llm_error_handling.enabled ? m.llmErrorHandlingMiddleware() : null));
  fill("ToolErrorHandling", (m) => m.toolErrorHandlingMiddleware());
  fill("Summarization", async (m, a) => {
    const s = config.summarization;
    const entry = config.models.find((model) => model.name === a.modelInfo?.name);
    const budget = summarizationBudget(s, entry ? contextWindowOf(entry) : undefined);
    if (!budget) return null;
    const model = s.model_name ? await ctx.models.create(s.model_name) : a.model;
    return m.summarizationMiddleware({
      model,
      triggerTokens: budget.triggerTokens,
      keepMessages: s.keep_messages,
      targetTokens: budget.targetTokens,
      logger: ctx.logger,
    });
  });
  fill("Todo", (m) => (config.todo.enabled ? m.todoMiddleware() : null));
  fill("Title", async (m, a) => {
    // A subagent's run has no thread of its own to name; a title call would only cost a model call.
    if (!config.title.enabled || a.subagent) return null;
    const model = config.title.model_name ? await ctx.models.create(config.title.model_name) : a.model;
    return m.titleMiddleware({ model, maxWords: config.title.max_words, maxChars: config.title.max_chars });
  });
  fill("ViewImage", (m, a) => (a.modelInfo?.supportsVision ? m.viewImageMiddleware({ baseDir, sandbox: liveSandboxLookup(ctx) }) : null));
  fill("LoopDetection", (m) => {
    const l = config.loop_detection;
    return l.enabled
      ? m.loopDetectionMiddleware({ warnThreshold: l.warn_threshold, hardLimit: l.hard_limit, windowSize: l.window_size })
      : null;
  });
  fill("TokenUsage", (m) => (config.token_usage.enabled ? m.tokenUsageMiddleware({ logger: ctx.logger }) : null));
  // Unattended runs (`non_interactive`) keep the middleware but not the tool: nobody would answer.
  fill("Clarification", (m, a) => {
    const spec = m.clarificationMiddleware();
    return m.isClarificationAllowed(a.context) ? spec : { ...spec, tools: [] };
  });
}

/**
 * The run's sandbox by id, if it is live in this process: `view_image` and `present_files` read files made in a
 * remote sandbox through it. No provider configured (or none reachable) means none.
 */
function liveSandboxLookup(ctx: PluginContext): (sandboxId: string) => Sandbox | undefined {
  return (sandboxId) => {
    try {
      return ctx.sandbox.provider().get(sandboxId);
    } catch {
      return undefined;
    }
  };
}

/** present_files always; view_image for vision models; setup_agent in bootstrap runs; update_agent for custom agents. */
function addBuiltinTools(ctx: PluginContext): void {
  const baseDir = ctx.paths.baseDir;
  // Stage `first`: before the sandbox plugin's run-end release, a cancelled run's live-sandbox reads finish. The
  // drain comes with the lazily loaded tools; until they load, no read can be under way.
  let readDrain: import("./tools/read-drain.js").SandboxReadDrain | undefined;
  ctx.hooks.runEnd.tap(
    async (run) => {
      if (run.threadId !== undefined) await readDrain?.drain(`${run.userId ?? DEFAULT_USER_ID}\u0000${run.threadId}`);
    },
    { stage: "first" },
  );
  const modelNames = () => ctx.kernelConfig.models.map((m) => m.name);
  let tools: Promise<Record<"presentFiles" | "viewImage" | "setupAgent" | "updateAgent", AntlerTool>> | undefined;
  const builtin = () =>
    (tools ??= import("./tools/index.js").then((t: Tools) => {
      readDrain = new t.SandboxReadDrain();
      return {
        presentFiles: t.createPresentFilesTool({ baseDir, sandbox: liveSandboxLookup(ctx) }),
        viewImage: t.createViewImageTool({ baseDir, sandbox: liveSandboxLookup(ctx), drain: readDrain }),
        setupAgent: t.createSetupAgentTool({ baseDir, modelNames }),
        updateAgent: t.createUpdateAgentTool({ baseDir, modelNames }),
      };
    }));
  const models = ctx.kernelConfig.models;
  const isVision = (modelName: string | undefined) =>
    models.find((m) => m.name === (modelName ?? ctx.kernelConfig.default_model ?? models[0]?.name))?.supports_vision === true;
  ctx.tools.add(async () => (await builtin()).presentFiles, { source: "builtin", name: "present_files" });
  ctx.tools.add(async (a) => (isVision(a.modelName) ? (await builtin()).viewImage : null), { source: "builtin", name: "view_image" });
  ctx.tools.add(async (a) => (a.context.is_bootstrap === true ? (await builtin()).setupAgent : null), {
    source: "builtin",
    name: "setup_agent",
  });
  ctx.tools.add(
    async (a) => (typeof a.context.agent_name === "string" && a.context.is_bootstrap !== true ? (await builtin()).updateAgent : null),
    { source: "builtin", name: "update_agent" },
  );
}

/**
 * Tools listed under `tools:` in config.yaml, each added under its configured name and group. Setup only checks
 * that each `use:` names an export of a module that resolves (so `antler config check` reports a bad entry); the
 * modules load on the first assembly, all at once, and a failed load is retried on the next.
 */
function addConfigTools(ctx: PluginContext): void {
  const entries = runtimeConfig(ctx.kernelConfig).tools;
  for (const [i, entry] of entries.entries()) configToolModule(entry.use, ctx.paths.configDir, `tools[${i}].use`);
  let loaded: Promise<Array<{ tool: AntlerTool }>> | undefined;
  const load = () => {
    loaded ??= import("./config-tools.js").then((m) => m.loadConfigTools(ctx));
    return loaded.catch((err: unknown) => {
      loaded = undefined; // a fixed file loads on the next assembly
      throw err;
    });
  };
  for (const [i, entry] of entries.entries()) {
    ctx.tools.add(async () => (await load())[i]?.tool, {
      source: "config",
      name: entry.name,
      group: entry.group,
      idempotent: entry.idempotent,
    });
  }
}
