import type { AntlerTool, Kernel, ModelInfo } from "@antler/kernel";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { createAgent, type ReactAgent } from "langchain";
import { useSparseChannels } from "../channels.js";
import { runtimeConfig } from "../config.js";
import { callGraphDirectly } from "../direct.js";
import { compileThreadPipeline } from "../state.js";

/** The lead agent's default system prompt; `system_prompt` in config.yaml replaces it. */
export const DEFAULT_SYSTEM_PROMPT = `You are Antler, a capable assistant that gets work done with tools.

<working_directory>
Your files live under /mnt/user-data:
- /mnt/user-data/uploads: files the user gave you (read them when they matter)
- /mnt/user-data/workspace: scratch space
- /mnt/user-data/outputs: deliverables; anything the user should receive goes here
Show the user a deliverable with present_files once it is written.
</working_directory>

<working_style>
- For multi-step work, make a short plan first when a planning tool is available, and keep it current.
- Prefer checking facts with tools over guessing. Cite the tool results you rely on.
- If the request is ambiguous in a way that changes the outcome, ask with ask_clarification instead of guessing; otherwise proceed.
- When a tool fails, read the error and adjust; do not repeat the same failing call.
- Finish with a concise answer that says what you did and where the results are.
</working_style>`;

export interface LeadAgentInput {
  kernel: Kernel;
  model: BaseChatModel;
  modelName: string | undefined;
  modelInfo: ModelInfo | undefined;
  checkpointer: BaseCheckpointSaver;
  context: Readonly<Record<string, unknown>>;
  /** From `kernel.getAvailableTools` for this run (the caller keys its agent cache on their names). */
  tools: AntlerTool[];
  /** Sections appended to the base system prompt, in order (a custom agent's soul). */
  promptSections?: readonly string[];
  /** LangChain middleware inside the whole chain, closest to the model and the tools (the tool-call journal). */
  innermost?: readonly unknown[];
}

/**
 * Builds the lead agent: the run's tools plus the middleware chain from `assembleMiddleware`, compiled into
 * LangChain middleware around `createAgent`.
 */
export async function buildLeadAgent(input: LeadAgentInput): Promise<{ agent: ReactAgent; order: string[] }> {
  const { kernel, tools } = input;
  const chain = await kernel.assembleMiddleware({
    modelName: input.modelName,
    modelInfo: input.modelInfo,
    model: input.model,
    subagent: false,
    context: input.context,
  });
  const pipeline = compileThreadPipeline(chain);
  const names = new Set(tools.map((t) => t.name));
  const agent = createAgent({
    model: input.model,
    tools: [...tools, ...pipeline.tools.filter((t) => !names.has(t.name))],
    middleware: [...pipeline.middleware, ...(input.innermost ?? [])],
    systemPrompt: [runtimeConfig(kernel.config).system_prompt ?? DEFAULT_SYSTEM_PROMPT, ...(input.promptSections ?? [])].join("\n\n"),
    checkpointer: input.checkpointer,
  } as unknown as Parameters<typeof createAgent>[0]) as unknown as ReactAgent;
  useSparseChannels(agent.graph);
  return { agent: callGraphDirectly(agent, pipeline.stateFields), order: pipeline.order };
}
