import { AntlerError } from "@antler/kernel";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { type BaseCheckpointSaver, isGraphBubbleUp } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { RuntimeErrorCodes } from "../errors.js";

/** The error a write of an instance that no longer holds its run gets (it was taken over elsewhere). */
export function takenOverError(runId: string): AntlerError {
  return new AntlerError(
    RuntimeErrorCodes.RUN_TAKEN_OVER,
    `run ${runId} was taken over by another instance; this one stops writing to it`,
    {
      hint: "Its lease expired while this process could not renew it (a long stall, or the database was unreachable). The run goes on where it was taken over.",
      details: { run_id: runId },
    },
  );
}

/**
 * The saver with every checkpoint write gated by `check`, which throws when the write's thread belongs to a run this
 * process no longer holds. Everything else goes straight to the saver.
 */
export function fencedSaver(saver: BaseCheckpointSaver, check: (checkpointThread: unknown) => Promise<void>): BaseCheckpointSaver {
  return new Proxy(saver, {
    get(target, prop, receiver) {
      if (prop === "put" || prop === "putWrites") {
        const write = Reflect.get(target, prop, receiver) as (
          config: { configurable?: Record<string, unknown> },
          ...rest: unknown[]
        ) => unknown;
        return async (config: { configurable?: Record<string, unknown> }, ...rest: unknown[]) => {
          await check(config?.configurable?.thread_id);
          return write.call(target, config, ...rest);
        };
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** What the tool-call journal says about one call that is about to run. */
export type ToolCallStart = "start" | "interrupted" | "untracked";

/** The tool result a non-idempotent call that was in flight when its process stopped gets instead of running again. */
export function interruptedToolResult(call: { id: string; name: string }): ToolMessage {
  return new ToolMessage({
    content: `The call to ${call.name} was interrupted: the process running this run stopped while the tool ran, and the call was not retried because ${call.name} is not declared idempotent (running it again could repeat its effect). Check whether it took effect before calling it again.`,
    tool_call_id: call.id,
    name: call.name,
    status: "error",
    additional_kwargs: { antler_tool_meta: { status: "error", error_type: "interrupted_not_retried", recoverable_by_model: true } },
  });
}

/**
 * The innermost tool wrapper: before a tool that is not idempotent runs, the journal notes the call (conditional on
 * the run's fence). A call an earlier attempt of the run already started is answered with `interruptedToolResult`
 * and never runs twice; idempotent tools run again freely. A call that stops for an interrupt is forgotten, so its
 * resume runs it.
 */
export function toolJournalMiddleware(journal: {
  idempotent: ReadonlySet<string>;
  start(runId: string, call: { id: string; name: string }): Promise<ToolCallStart>;
  forget(runId: string, callId: string): Promise<void>;
}) {
  return createMiddleware({
    name: "AntlerToolJournal",
    async wrapToolCall(request, handler) {
      const call = request.toolCall;
      const runId = (request.runtime?.context as { run_id?: unknown } | undefined)?.run_id;
      if (journal.idempotent.has(call.name) || typeof runId !== "string" || !call.id) return handler(request);
      const started = await journal.start(runId, { id: call.id, name: call.name });
      if (started === "interrupted") return interruptedToolResult({ id: call.id, name: call.name });
      try {
        return await handler(request);
      } catch (err) {
        if (started === "start" && isGraphBubbleUp(err)) await journal.forget(runId, call.id);
        throw err;
      }
    },
  });
}

/** The part of a thread's graph state `takeoverInput` reads. */
export interface TakeoverState {
  values?: { messages?: ReadonlyArray<{ id?: string | undefined }> };
  next?: readonly string[];
}

/**
 * What a taken-over run is continued with: nothing when the thread's checkpoint already holds the run's input
 * message (LangGraph goes on from it, skipping the tasks whose writes it kept), else the run's recorded input, when
 * its process died before the first checkpoint. A record without the message id (written before takeovers) goes on
 * from the checkpoint when the graph has steps left.
 */
export async function takeoverInput(
  readState: () => Promise<TakeoverState>,
  recorded: { input?: unknown; inputMessageId?: unknown },
): Promise<{ input: unknown; inputMessageId: string | undefined }> {
  const state = await readState();
  const id = typeof recorded.inputMessageId === "string" ? recorded.inputMessageId : undefined;
  const started = id !== undefined ? (state.values?.messages ?? []).some((m) => m.id === id) : (state.next?.length ?? 0) > 0;
  if (started) return { input: null, inputMessageId: undefined };
  const human = new HumanMessage({ content: typeof recorded.input === "string" ? recorded.input : "", ...(id ? { id } : {}) });
  return { input: { messages: [human] }, inputMessageId: id };
}
