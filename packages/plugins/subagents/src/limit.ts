import type { MiddlewareFactory, MiddlewareSpec } from "@antler/kernel";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { SUBAGENT_LIMIT_MIDDLEWARE_NAME, TASK_TOOL_NAME } from "./contract.js";

export { SUBAGENT_LIMIT_MIDDLEWARE_NAME };

/** Set on the refusal's `additional_kwargs`; refused calls do not count against the per-run budget. */
export const LIMIT_FLAG = "subagent_limit";

export interface SubagentLimitOptions {
  /** `task` calls one model response may start (`subagents.max_concurrent`). */
  maxPerResponse: number;
  /** `task` calls one run may start (`subagents.max_total_per_run`). */
  maxPerRun: number;
}

function taskCallIds(message: AIMessage): string[] {
  return (message.tool_calls ?? []).filter((c) => c.name === TASK_TOOL_NAME).map((c) => c.id ?? "");
}

/**
 * Caps `task` calls per model response and per run (one run = the turn since the last user message). A call
 * over either cap is not run: it gets an error result saying which limit it hit, so the model can wait for the
 * running tasks or do the work itself. The count is derived from the messages, so it holds for parallel calls.
 */
export function subagentLimitSpec(options: SubagentLimitOptions): MiddlewareSpec {
  return {
    name: SUBAGENT_LIMIT_MIDDLEWARE_NAME,
    async wrapToolCall(request, handler) {
      if (request.toolCall.name !== TASK_TOOL_NAME) return handler(request);
      const id = request.toolCall.id ?? "";
      const messages = request.state.messages;
      let start = 0;
      for (let i = messages.length - 1; i >= 0; i--) {
        if (HumanMessage.isInstance(messages[i])) {
          start = i + 1;
          break;
        }
      }
      const turn = messages.slice(start);
      const refused = new Set(
        turn
          .filter((m): m is ToolMessage => ToolMessage.isInstance(m) && m.additional_kwargs?.[LIMIT_FLAG] === true)
          .map((m) => m.tool_call_id),
      );
      const responses = turn.filter((m): m is AIMessage => AIMessage.isInstance(m));
      const current = [...responses].reverse().find((m) => taskCallIds(m).includes(id));
      let admitted = 0;
      for (const response of responses) {
        if (response === current) break;
        admitted += taskCallIds(response).filter((c) => !refused.has(c)).length;
      }
      const inResponse = current ? taskCallIds(current) : [id];
      const index = Math.max(0, inResponse.indexOf(id));
      for (let i = 0; i < index; i++) if (i < options.maxPerResponse && admitted < options.maxPerRun) admitted++;
      let reason: string | undefined;
      if (index >= options.maxPerResponse) {
        reason = `at most ${options.maxPerResponse} task calls may start from one response (subagents.max_concurrent); this one was not run. Call it again after the running tasks return.`;
      } else if (admitted >= options.maxPerRun) {
        reason = `this run already started ${admitted} task(s), the limit per run (subagents.max_total_per_run); this one was not run. Do the remaining work yourself or finish.`;
      }
      if (!reason) return handler(request);
      return new ToolMessage({
        content: `Error: ${reason}`,
        name: TASK_TOOL_NAME,
        tool_call_id: id,
        status: "error",
        additional_kwargs: { [LIMIT_FLAG]: true },
      });
    },
  };
}

/** The lead's SubagentLimit; subagent builds do not get it (they have no `task`). */
export function subagentLimitMiddleware(options: SubagentLimitOptions): MiddlewareFactory {
  return {
    name: SUBAGENT_LIMIT_MIDDLEWARE_NAME,
    create: (build) => (build.subagent ? null : subagentLimitSpec(options)),
  };
}
