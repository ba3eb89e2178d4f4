import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAntlerError } from "@antler/kernel";
import { loadAuthoring } from "@antler/kernel/authoring";
import { ScriptedChatModel } from "@antler/kernel/testing";
import { createAntlerAgent } from "@antler/plugin-runtime";
import { type AIMessage, HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { bindSubagents, type SubagentOutcome, type SubagentRequest, type SubagentRunner, sha256 } from "../src/index.js";

// These tests hand tools to LangChain with no kernel started, so they load LangChain for the authoring helpers first.
beforeAll(() => loadAuthoring());

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "antler-bind-subagents-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A kernel-less runner: each subagent is another createAntlerAgent on its own scripted model and checkpoint thread. */
function agentRunner(baseDir: string, answer: (request: SubagentRequest) => string) {
  const requests: SubagentRequest[] = [];
  const runner: SubagentRunner = {
    types: () => ["general-purpose", "reviewer"],
    async run(request): Promise<SubagentOutcome> {
      requests.push(request);
      const started = performance.now();
      const model = new ScriptedChatModel(() => ({ text: answer(request) }));
      const { agent } = createAntlerAgent({ model, baseDir, name: request.subagentType });
      const state = (await agent.invoke(
        { messages: [new HumanMessage(request.prompt)] },
        { configurable: { thread_id: `${request.threadId}:${request.taskId}` }, context: { thread_id: request.threadId } },
      )) as { messages: AIMessage[] };
      const result = String(state.messages.at(-1)?.content ?? "");
      return {
        status: "completed",
        result,
        resultSha256: sha256(result),
        receipts: [],
        durationMs: performance.now() - started,
        taskId: request.taskId,
      };
    },
  };
  return { runner, requests };
}

const tool = (name: string, args: Record<string, unknown>, id: string) => ({ id, name, args });

describe("bindSubagents + createAntlerAgent, no kernel", () => {
  it("binds task to the caller's runner and config: the lead delegates, the subagent answers, the result comes back", async () => {
    const baseDir = tempDir();
    const { runner, requests } = agentRunner(baseDir, (r) => `reviewed: ${r.prompt}`);
    const bound = bindSubagents({
      runner,
      section: { custom_agents: { reviewer: { description: "Reviews code for bugs.", system_prompt: "You review code." } } },
    });
    cleanups.push(() => bound.close());
    expect(bound.types.map((t) => t.name)).toEqual(["general-purpose", "reviewer"]);

    const lead = new ScriptedChatModel([
      { toolCalls: [tool("task", { description: "review", prompt: "check sum.ts", subagent_type: "reviewer" }, "t1")] },
      { text: "the reviewer is done" },
    ]);
    const { agent } = createAntlerAgent({ model: lead, baseDir, subagents: bound });
    const state = (await agent.invoke(
      { messages: [new HumanMessage("get sum.ts reviewed")] },
      { configurable: { thread_id: "lead-1" }, context: { thread_id: "lead-1", user_id: "u1" } },
    )) as { messages: Array<AIMessage | ToolMessage> };

    expect(lead.calls[0]?.tools).toContain("task");
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ prompt: "check sum.ts", subagentType: "reviewer", threadId: "lead-1", userId: "u1", taskId: "t1" });
    const result = state.messages.find((m) => m.getType() === "tool") as ToolMessage;
    expect(result.status).toBe("success");
    expect(String(result.content)).toContain("reviewed: check sum.ts");
    expect(result.additional_kwargs).toMatchObject({ subagent_status: "completed", subagent_type: "reviewer", subagent_task_id: "t1" });
    expect(state.messages.at(-1)?.content).toBe("the reviewer is done");
  });

  it("applies the caller's caps (max_concurrent) and refuses a type its config does not have, without running it", async () => {
    const baseDir = tempDir();
    const { runner, requests } = agentRunner(baseDir, () => "done");
    const bound = bindSubagents({ runner, section: { max_concurrent: 1 } });
    cleanups.push(() => bound.close());
    const lead = new ScriptedChatModel([
      {
        toolCalls: [
          tool("task", { description: "a", prompt: "first", subagent_type: "general-purpose" }, "a"),
          tool("task", { description: "b", prompt: "second", subagent_type: "general-purpose" }, "b"),
        ],
      },
      { toolCalls: [tool("task", { description: "c", prompt: "third", subagent_type: "reviewer" }, "c")] },
      { text: "ok" },
    ]);
    const { agent } = createAntlerAgent({ model: lead, baseDir, subagents: bound });
    const state = (await agent.invoke(
      { messages: [new HumanMessage("go")] },
      { configurable: { thread_id: "lead-2" }, context: { thread_id: "lead-2" } },
    )) as { messages: Array<AIMessage | ToolMessage> };
    const results = new Map(state.messages.filter((m): m is ToolMessage => m.getType() === "tool").map((m) => [m.tool_call_id, m]));
    expect(results.get("a")?.status).toBe("success");
    expect(results.get("b")?.status).toBe("error");
    expect(String(results.get("b")?.content)).toContain("subagents.max_concurrent");
    expect(String(results.get("c")?.content)).toContain('unknown subagent_type "reviewer"');
    expect(requests.map((r) => r.prompt)).toEqual(["first"]);
    // No bash type unless the caller says bash may run.
    expect(bound.types.map((t) => t.name)).toEqual(["general-purpose"]);
    expect(bindSubagents({ runner, bashAllowed: true }).types.map((t) => t.name)).toEqual(["general-purpose", "bash"]);
  });

  it("refuses invalid config with a coded error naming the key", () => {
    const { runner } = agentRunner(tmpdir(), () => "x");
    const err = (() => {
      try {
        bindSubagents({ runner, section: { max_concurrent: 0 } });
      } catch (e) {
        return e;
      }
    })();
    expect(isAntlerError(err) && err.code).toBe("ANTLER_ERR_CONFIG_INVALID");
    expect((err as Error).message).toContain("section.max_concurrent");
  });
});
