import { DEFAULT_USER_ID, isAntlerError, type ThreadPaths, threadPaths } from "@antler/kernel";
import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import type { RunContextValues } from "../context.js";

/** Options every file-touching built-in tool takes. */
export interface BuiltinToolOptions {
  /** Antler's data folder (absolute); thread and agent folders live under `<baseDir>/users/<user>/`. */
  baseDir: string;
  /** The configured model names; `setup_agent` and `update_agent` refuse any other. Omitted: not checked. */
  modelNames?: () => readonly string[];
}

/** Why a model name cannot be saved into an agent's config.yaml, or `null` when it can. */
export function unknownModelReason(options: BuiltinToolOptions, model: string): string | null {
  const known = options.modelNames?.();
  if (!known || known.includes(model)) return null;
  return `Model ${JSON.stringify(model)} is not configured; use one of: ${known.join(", ")}. Nothing was changed.`;
}

/**
 * The run-context keys the built-in tools read. `runtime.context` is whatever the caller passed to the graph,
 * so each key is checked for its type instead of trusted; a mistyped key counts as absent.
 */
export function readRunContext(runtime: ToolRuntime | undefined): RunContextValues {
  const raw: unknown = runtime?.context;
  if (raw === null || typeof raw !== "object") return {};
  const ctx = raw as Record<string, unknown>;
  const str = (key: string) => (typeof ctx[key] === "string" && ctx[key] !== "" ? (ctx[key] as string) : undefined);
  const bool = (key: string) => (typeof ctx[key] === "boolean" ? (ctx[key] as boolean) : undefined);
  const out: RunContextValues = {};
  const threadId = str("thread_id");
  const userId = str("user_id");
  const agentName = str("agent_name");
  const isBootstrap = bool("is_bootstrap");
  const nonInteractive = bool("non_interactive");
  if (threadId !== undefined) out.thread_id = threadId;
  if (userId !== undefined) out.user_id = userId;
  if (agentName !== undefined) out.agent_name = agentName;
  if (isBootstrap !== undefined) out.is_bootstrap = isBootstrap;
  if (nonInteractive !== undefined) out.non_interactive = nonInteractive;
  return out;
}

/** The user a run acts for: `user_id` from the run context, or the single-user default. */
export function runUserId(context: RunContextValues): string {
  return context.user_id ?? DEFAULT_USER_ID;
}

/** A tool's answer to the model. `error` answers are refusals the model should read and act on. */
export function toolReply(
  runtime: ToolRuntime | undefined,
  name: string,
  content: string,
  extra: { status?: "success" | "error"; artifact?: unknown } = {},
): ToolMessage {
  return new ToolMessage({
    content,
    name,
    tool_call_id: runtime?.toolCallId ?? "",
    status: extra.status ?? "success",
    ...(extra.artifact !== undefined ? { artifact: extra.artifact } : {}),
  });
}

export function toolRefusal(runtime: ToolRuntime | undefined, name: string, content: string): ToolMessage {
  return toolReply(runtime, name, content, { status: "error" });
}

/** The first line of an error's message: AntlerError messages carry a hint on later lines that tools rephrase. */
export function describeError(err: unknown): string {
  if (isAntlerError(err)) return err.message.split("\n")[0] ?? err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

export type ThreadScope = { ok: true; paths: ThreadPaths } | { ok: false; reason: string };

/** The host folders of the run's thread, or why there are none (no `thread_id`, unusable ids). */
export function resolveThreadScope(baseDir: string, context: RunContextValues): ThreadScope {
  if (context.thread_id === undefined) {
    return {
      ok: false,
      reason:
        "this run has no thread_id, so there is no /mnt/user-data folder to work in. This is a host configuration problem; tell the user.",
    };
  }
  try {
    return { ok: true, paths: threadPaths(baseDir, runUserId(context), context.thread_id) };
  } catch (err) {
    return { ok: false, reason: `${describeError(err)}. This is a host configuration problem; tell the user.` };
  }
}
