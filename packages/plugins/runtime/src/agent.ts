import { resolve } from "node:path";
import {
  AntlerError,
  type AntlerTool,
  type BuiltinMiddlewareName,
  composeChain,
  DEFAULT_CHAIN,
  ErrorCodes,
  type MiddlewareEntry,
  type MiddlewarePlacement,
  type MiddlewareSpec,
} from "@antler/kernel";
import { loadAuthoring } from "@antler/kernel/authoring";
import type { CompiledPipeline } from "@antler/kernel/pipeline";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { createAgent, type ReactAgent } from "langchain";
import { useSparseChannels } from "./channels.js";
import { callGraphDirectly } from "./direct.js";
import { clarificationMiddleware } from "./middleware/clarification.js";
import { danglingToolCallMiddleware } from "./middleware/dangling-tool-call.js";
import { llmErrorHandlingMiddleware, toolErrorHandlingMiddleware } from "./middleware/error-handling.js";
import { loopDetectionMiddleware } from "./middleware/loop-detection.js";
import { summarizationMiddleware } from "./middleware/summarization.js";
import { threadDataMiddleware } from "./middleware/thread-data.js";
import { titleMiddleware } from "./middleware/title.js";
import { todoMiddleware } from "./middleware/todo.js";
import { tokenUsageMiddleware } from "./middleware/token-usage.js";
import { uploadsMiddleware } from "./middleware/uploads.js";
import { viewImageMiddleware } from "./middleware/view-image.js";
import { compileThreadPipeline } from "./state.js";

// The runtime hands tools to LangChain itself (createAntlerAgent, and a kernel-less composition calls it directly),
// so LangChain's tool classes must be loaded first: tools made with defineTool before that are stand-ins until then.
await loadAuthoring();

/** The default chain's switches for `createAntlerAgent`: `true` = built-in, `false` = off, a spec = replacement. */
export interface AgentFeatures {
  threadData?: boolean | MiddlewareSpec;
  uploads?: boolean | MiddlewareSpec;
  danglingToolCall?: boolean | MiddlewareSpec;
  llmErrorHandling?: boolean | MiddlewareSpec;
  toolErrorHandling?: boolean | MiddlewareSpec;
  summarization?: boolean | MiddlewareSpec;
  todo?: boolean | MiddlewareSpec;
  title?: boolean | MiddlewareSpec;
  viewImage?: boolean | MiddlewareSpec;
  loopDetection?: boolean | MiddlewareSpec;
  tokenUsage?: boolean | MiddlewareSpec;
  clarification?: boolean | MiddlewareSpec;
}

const FEATURE_OF: Record<keyof AgentFeatures, BuiltinMiddlewareName> = {
  threadData: "ThreadData",
  uploads: "Uploads",
  danglingToolCall: "DanglingToolCall",
  llmErrorHandling: "LLMErrorHandling",
  toolErrorHandling: "ToolErrorHandling",
  summarization: "Summarization",
  todo: "Todo",
  title: "Title",
  viewImage: "ViewImage",
  loopDetection: "LoopDetection",
  tokenUsage: "TokenUsage",
  clarification: "Clarification",
};

/** On unless switched off; summarization, todo, title and view-image are opt-in (they cost model calls or need a vision model). */
const DEFAULT_ON: ReadonlySet<keyof AgentFeatures> = new Set([
  "threadData",
  "uploads",
  "danglingToolCall",
  "llmErrorHandling",
  "toolErrorHandling",
  "loopDetection",
  "tokenUsage",
  "clarification",
]);

export interface ExtraMiddleware {
  spec: MiddlewareSpec;
  placement?: MiddlewarePlacement;
  /** Namespace for the middleware's name (`<plugin>/<name>`). Default "app". */
  plugin?: string;
}

export interface CreateAntlerAgentOptions {
  model: BaseChatModel;
  tools?: readonly AntlerTool[];
  systemPrompt?: string;
  /** Switch default-chain middlewares on or off, or replace one with your own spec. */
  features?: AgentFeatures;
  /** More middleware, placed by `before`/`after`/`stage` (default stage: normal, just before Clarification). */
  extraMiddleware?: ReadonlyArray<MiddlewareSpec | ExtraMiddleware>;
  /** Full takeover: exactly this chain, in this order. Cannot be combined with `features` or `extraMiddleware`. */
  middleware?: readonly MiddlewareSpec[];
  checkpointer?: BaseCheckpointSaver;
  /** Data folder for thread user-data (ThreadData, Uploads, ViewImage). Default `./.antler`. */
  baseDir?: string;
  /** LangGraph recursion limit; the default of 25 is far too low for real agents. Default 1000. */
  recursionLimit?: number;
  name?: string;
  /**
   * Subagents without a kernel: the `task` tool and its limit middleware bound to your runner and config, as
   * `bindSubagents({ runner, section, config })` of `@antler/plugin-subagents` returns them. The tools join `tools`;
   * the middleware joins the chain (after a `middleware` takeover's last entry).
   */
  subagents?: AgentSubagents;
}

/** What `createAntlerAgent` needs to offer `task`: its tools and middleware, already bound to a runner. */
export interface AgentSubagents {
  readonly tools: readonly AntlerTool[];
  readonly middleware?: readonly MiddlewareSpec[];
}

export interface AntlerAgent {
  /** The LangChain agent, with the recursion limit applied. */
  readonly agent: ReactAgent;
  readonly pipeline: CompiledPipeline;
}

/** The built-in spec for a default-chain name, built with the given options. */
export function builtinMiddleware(name: BuiltinMiddlewareName, options: { baseDir: string; model?: BaseChatModel }): MiddlewareSpec {
  switch (name) {
    case "ThreadData":
      return threadDataMiddleware({ baseDir: options.baseDir });
    case "Uploads":
      return uploadsMiddleware({ baseDir: options.baseDir });
    case "DanglingToolCall":
      return danglingToolCallMiddleware();
    case "LLMErrorHandling":
      return llmErrorHandlingMiddleware();
    case "ToolErrorHandling":
      return toolErrorHandlingMiddleware();
    case "Summarization":
      return summarizationMiddleware({ model: options.model });
    case "Todo":
      return todoMiddleware();
    case "Title":
      return titleMiddleware({ model: options.model });
    case "ViewImage":
      return viewImageMiddleware({ baseDir: options.baseDir });
    case "LoopDetection":
      return loopDetectionMiddleware();
    case "TokenUsage":
      return tokenUsageMiddleware();
    case "Clarification":
      return clarificationMiddleware();
  }
}

export function builtinEntry(name: BuiltinMiddlewareName, spec: MiddlewareSpec, plugin = "@antler/plugin-runtime"): MiddlewareEntry {
  return { name, plugin, placement: { slot: name }, spec };
}

/**
 * Builds an agent in code, with Antler's middleware pipeline around LangChain's `createAgent`, and without a
 * config file or kernel. The reference for distributions that compose Antler themselves.
 */
export function createAntlerAgent(options: CreateAntlerAgentOptions): AntlerAgent {
  const baseDir = resolve(options.baseDir ?? ".antler");
  let chain: MiddlewareEntry[];
  if (options.middleware) {
    if (options.features || options.extraMiddleware) {
      throw new AntlerError(
        ErrorCodes.PIPELINE_INVALID,
        "`middleware` takes over the whole chain and cannot be combined with `features` or `extraMiddleware`",
        {
          where: "createAntlerAgent",
          hint: "Either list every middleware in `middleware`, or use `features` + `extraMiddleware`.",
        },
      );
    }
    chain = [...options.middleware, ...(options.subagents?.middleware ?? [])].map((spec) => ({
      name: spec.name,
      plugin: "app",
      placement: {},
      spec,
    }));
    const seen = new Set<string>();
    for (const e of chain) {
      if (seen.has(e.name))
        throw new AntlerError(ErrorCodes.PIPELINE_INVALID, `middleware "${e.name}" appears twice in \`middleware\``, {
          where: "createAntlerAgent",
        });
      seen.add(e.name);
    }
  } else {
    const features = options.features ?? {};
    const builtins: MiddlewareEntry[] = [];
    for (const name of DEFAULT_CHAIN) {
      const key = (Object.keys(FEATURE_OF) as Array<keyof AgentFeatures>).find((k) => FEATURE_OF[k] === name) as keyof AgentFeatures;
      const setting = features[key] ?? DEFAULT_ON.has(key);
      if (setting === false) continue;
      const spec = setting === true ? builtinMiddleware(name, { baseDir, model: options.model }) : setting;
      builtins.push(builtinEntry(name, spec));
    }
    const subagentMiddleware = (options.subagents?.middleware ?? []).map((spec): ExtraMiddleware => ({ spec, plugin: "subagents" }));
    const extras = [...(options.extraMiddleware ?? []), ...subagentMiddleware].map((item): MiddlewareEntry => {
      const extra: ExtraMiddleware = "spec" in item ? item : { spec: item };
      const plugin = extra.plugin ?? "app";
      return { name: `${plugin}/${extra.spec.name}`, plugin, placement: extra.placement ?? {}, spec: extra.spec };
    });
    chain = composeChain(builtins, extras);
  }
  const pipeline = compileThreadPipeline(chain);
  const given = [...(options.tools ?? []), ...(options.subagents?.tools ?? [])];
  const toolNames = new Set(given.map((t) => t.name));
  const tools = [...given, ...pipeline.tools.filter((t) => !toolNames.has(t.name))];
  const agent = createAgent({
    model: options.model,
    tools,
    middleware: pipeline.middleware,
    ...(options.systemPrompt ? { systemPrompt: options.systemPrompt } : {}),
    ...(options.checkpointer ? { checkpointer: options.checkpointer } : {}),
    ...(options.name ? { name: options.name } : {}),
  } as unknown as Parameters<typeof createAgent>[0]) as unknown as ReactAgent;
  const configured = agent.withConfig({ recursionLimit: options.recursionLimit ?? 1000 }) as ReactAgent;
  useSparseChannels(configured.graph);
  return { agent: callGraphDirectly(configured, pipeline.stateFields), pipeline };
}
