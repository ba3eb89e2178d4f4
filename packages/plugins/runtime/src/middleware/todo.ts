import type { AntlerTool, MiddlewareSpec } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { AIMessage, type BaseMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import type { Todo } from "../state.js";

export const WRITE_TODOS_TOOL = "write_todos";
export const MAX_TODOS = 50;

const writeTodosSchema = z.object({
  todos: z
    .array(
      z.object({
        content: z.string().describe("The task, as a short imperative sentence. Must not be empty."),
        status: z.enum(["pending", "in_progress", "completed"]).describe("At most one item may be in_progress."),
      }),
    )
    .describe(`The complete list (at most ${MAX_TODOS} items). It replaces the previous list.`),
});

/** What is wrong with a proposed list, in words the model can act on; null when it is fine. */
export function validateTodos(todos: readonly Todo[]): string | null {
  if (todos.length > MAX_TODOS)
    return `the list has ${todos.length} items; at most ${MAX_TODOS} are allowed. Merge or drop items and send the list again.`;
  const empty = todos.findIndex((t) => t.content.trim() === "");
  if (empty >= 0) return `item ${empty + 1} has empty content. Give every item a short description.`;
  const active = todos.filter((t) => t.status === "in_progress").length;
  if (active > 1)
    return `${active} items are in_progress; at most one may be. Keep one in_progress and set the others to pending or completed.`;
  return null;
}

function summarize(todos: readonly Todo[]): string {
  const count = (s: Todo["status"]) => todos.filter((t) => t.status === s).length;
  return `${todos.length} items: ${count("completed")} completed, ${count("in_progress")} in progress, ${count("pending")} pending`;
}

function errorResult(message: string, toolCallId: string): ToolMessage {
  return new ToolMessage({
    content: `Error: write_todos rejected the list: ${message}`,
    tool_call_id: toolCallId,
    name: WRITE_TODOS_TOOL,
    status: "error",
  });
}

/** The last assistant message in the state the tool runs in (the one that issued this call). */
function issuingMessage(state: unknown): AIMessage | undefined {
  const messages = (state as { messages?: BaseMessage[] } | undefined)?.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (AIMessage.isInstance(m)) return m;
  }
  return undefined;
}

function writeTodosTool(): AntlerTool {
  return defineTool({
    name: WRITE_TODOS_TOOL,
    description:
      "Create or update your todo list for the current task. Send the complete list each time; it replaces the previous one. " +
      "Use it for work with three or more steps; keep exactly one item in_progress while working and mark items completed as soon as they are done.",
    schema: writeTodosSchema,
    run({ todos }, runtime) {
      const toolCallId = runtime.toolCallId;
      // Plan mode off hides the tool from the model; a call that arrives anyway must not change the plan.
      if ((runtime.context as { plan_mode?: boolean } | undefined)?.plan_mode === false) {
        return errorResult("planning with todos is off for this run (plan mode is disabled).", toolCallId);
      }
      // Parallel calls would race on one state key (the last writer wins at random); refuse them all.
      const parallel = (issuingMessage(runtime.state)?.tool_calls ?? []).filter((c) => c.name === WRITE_TODOS_TOOL).length;
      if (parallel > 1)
        return errorResult(`it was called ${parallel} times in one response. Call it once with the complete list.`, toolCallId);
      const cleaned: Todo[] = todos.map((t) => ({ content: t.content.trim(), status: t.status }));
      const problem = validateTodos(cleaned);
      if (problem) return errorResult(problem, toolCallId);
      return new Command({
        update: {
          todos: cleaned,
          messages: [
            new ToolMessage({ content: `Todo list updated (${summarize(cleaned)}).`, tool_call_id: toolCallId, name: WRITE_TODOS_TOOL }),
          ],
        },
      });
    },
  });
}

const PLANNING_GUIDE = [
  `Plan multi-step work with the ${WRITE_TODOS_TOOL} tool: use it when a task needs three or more distinct steps or the user gives several tasks; skip it for simple requests.`,
  "- Send the complete list each time; it replaces the previous one.",
  "- Keep exactly one item in_progress while you work, and mark each item completed as soon as it is done, not in batches.",
  "- Add items you discover and remove ones that no longer apply.",
].join("\n");

/** The planning section of the system prompt, with the current list if there is one. */
export function renderTodoSection(todos: readonly Todo[] | undefined): string {
  const list = todos && todos.length > 0 ? todos.map((t, i) => `${i + 1}. [${t.status}] ${t.content}`).join("\n") : "(none yet)";
  return `<todo_list>\n${PLANNING_GUIDE}\nCurrent todos:\n${list}\n</todo_list>`;
}

/**
 * Planning with a todo list: brings `write_todos` (which replaces state `todos`) and tells the model how to
 * use it and what the list holds. A run with `plan_mode: false` in its context does not see the tool; any
 * other run does, since including this middleware is what turns the feature on.
 */
export function todoMiddleware(): MiddlewareSpec {
  const tool = writeTodosTool();
  return {
    name: "Todo",
    tools: [tool],
    wrapModelCall(request, handler) {
      if (request.runtime.context?.plan_mode === false) {
        return handler({ ...request, tools: request.tools.filter((t) => t.name !== WRITE_TODOS_TOOL) });
      }
      const section = renderTodoSection(request.state.todos as Todo[] | undefined);
      const current = request.systemMessage;
      const systemMessage = current.text === "" ? new SystemMessage(section) : current.concat(`\n\n${section}`);
      return handler({ ...request, systemMessage });
    },
  };
}
