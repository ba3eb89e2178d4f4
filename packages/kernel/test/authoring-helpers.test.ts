import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { isCommand } from "@langchain/langgraph";
import { afterEach, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { endTurn, hookContext, loadAuthoring, pluginAuthoringApi, refuseToolCall, withRunContext } from "../src/authoring.js";
import { type AntlerError, createToken, type Kernel, type RunContext } from "../src/index.js";
import { createTestKernel } from "../src/testing/index.js";

const call = (name: string, id = "call_1") => ({ toolCall: { name, id, args: {} } });

// A started kernel loads LangChain for these helpers; these tests call them with none.
beforeAll(() => loadAuthoring());

describe("refuseToolCall", () => {
  it("answers with an error tool message rendered as refused, naming the tool once", () => {
    const message = refuseToolCall(call("bash"), "shell access is off for this agent.");
    expect(ToolMessage.isInstance(message)).toBe(true);
    expect(message.content).toBe("Refused: bash was not run: shell access is off for this agent.");
    expect(message).toMatchObject({ status: "error", name: "bash", tool_call_id: "call_1" });
    expect(message.additional_kwargs.antler_tool_meta).toMatchObject({
      status: "error",
      error_type: "refused",
      recoverable_by_model: true,
    });
    expect(String(message.content)).not.toMatch(/failed/);
  });

  it("does not repeat the tool's name when the reason already names it", () => {
    expect(refuseToolCall(call("web-fetch"), "web-fetch is not allowed on this server.").content).toBe(
      "Refused: web-fetch is not allowed on this server.",
    );
    // A name inside another word does not count as naming the tool.
    expect(refuseToolCall(call("ls"), "also no.").content).toBe("Refused: ls was not run: also no.");
  });
});

describe("endTurn", () => {
  it("returns a Command that writes the final reply and the stop_reason", () => {
    const command = endTurn("Limit reached.", { stopReason: "turn_limit" });
    expect(isCommand(command)).toBe(true);
    const update = command.update as { messages: AIMessage[]; stop_reason: string | null };
    expect(update.stop_reason).toBe("turn_limit");
    expect(update.messages).toHaveLength(1);
    expect(AIMessage.isInstance(update.messages[0])).toBe(true);
    expect(update.messages[0]?.content).toBe("Limit reached.");
    expect(update.messages[0]?.tool_calls ?? []).toEqual([]);
  });

  it("replaces the model's reply by id when given one, and leaves stop_reason null without a reason", () => {
    const reply = new AIMessage({ id: "reply-7", content: "", tool_calls: [{ id: "x", name: "bash", args: {} }] });
    const update = endTurn("Stopping here.", { replacing: reply }).update as { messages: AIMessage[]; stop_reason: string | null };
    expect(update.messages[0]?.id).toBe("reply-7");
    expect(update.stop_reason).toBeNull();
  });
});

describe("hookContext", () => {
  const Scratch = createToken<{ runId: string }>("test.authoring.scratch");
  let kernel: Kernel | undefined;
  afterEach(async () => {
    await kernel?.close();
    kernel = undefined;
  });

  async function withRun<T>(fn: (run: RunContext) => T): Promise<T> {
    kernel = await createTestKernel({
      plugins: [
        pluginAuthoringApi.definePlugin({
          name: "scratch",
          version: "1.0.0",
          kernel: "^0.1.0",
          setup(ctx) {
            ctx.provide(Scratch, { lifetime: "run", useFactory: (scope) => ({ runId: scope.id }) });
          },
        }),
      ],
    });
    return kernel.run(fn, { runId: "run-42" });
  }

  const state = {
    messages: [
      new HumanMessage("first"),
      new AIMessage("ok"),
      new HumanMessage({ content: "skill body", additional_kwargs: { hide_from_ui: true } }),
      new HumanMessage("second"),
    ],
  };

  it("gives a wrap hook the run id, the turn number and the run's scope", async () => {
    const seen = await withRun((run) => {
      const hook = hookContext({ state, runtime: { context: withRunContext({ thread_id: "t" }, run) } });
      return { runId: hook.runId, turn: hook.turnNumber, scratch: hook.resolve(Scratch), again: hook.resolve(Scratch) };
    });
    expect(seen.runId).toBe("run-42");
    expect(seen.turn).toBe(2);
    expect(seen.scratch).toEqual({ runId: "run-42" });
    expect(seen.again).toBe(seen.scratch);
  });

  it("keeps the run out of anything serialized: only run_id shows in JSON", async () => {
    const json = await withRun((run) => JSON.stringify(withRunContext({ thread_id: "t" }, run)));
    expect(JSON.parse(json)).toEqual({ thread_id: "t", run_id: "run-42" });
  });

  it("takes a tool's runtime as { state: runtime.state, runtime }, which type-checks with no cast", async () => {
    // Checked by tsc (tsconfig.tests.json): ToolRuntime's state is `unknown`, which hookContext accepts.
    expectTypeOf(hookContext).toBeCallableWith({ state: {} as ToolRuntime["state"], runtime: {} as ToolRuntime });
    const seen = await withRun((run) => {
      const runtime = { state, context: withRunContext({ thread_id: "t" }, run), toolCallId: "c1" } as unknown as ToolRuntime;
      const hook = hookContext({ state: runtime.state, runtime });
      return { runId: hook.runId, turn: hook.turnNumber, scratch: hook.resolve(Scratch) };
    });
    expect(seen).toEqual({ runId: "run-42", turn: 2, scratch: { runId: "run-42" } });
  });

  it("says what to pass when the state it was given has no messages", () => {
    expect(() => hookContext({ state: undefined, runtime: {} }).turnNumber).toThrow(/without messages/);
  });

  it("takes a node hook's (state, runtime) the same way, and puts run_id in the context", async () => {
    const seen = await withRun((run) => {
      const context = withRunContext({ thread_id: "t" }, run);
      return { contextRunId: context.run_id, runId: hookContext(state, { context }).runId };
    });
    expect(seen).toEqual({ contextRunId: "run-42", runId: "run-42" });
  });

  it("refuses to resolve outside a kernel run with a coded error that says how to get one", () => {
    const hook = hookContext({ state: { messages: [] }, runtime: { context: {} } });
    expect(hook.runId).toBeUndefined();
    expect(hook.turnNumber).toBe(0);
    let error: AntlerError | undefined;
    try {
      hook.resolve(Scratch);
    } catch (e) {
      error = e as AntlerError;
    }
    expect(error?.code).toBe("ANTLER_ERR_DI_UNREGISTERED");
    expect(error?.message).toContain('"test.authoring.scratch"');
    expect(error?.hint).toContain("withRunContext");
  });
});
