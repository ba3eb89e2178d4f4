import { useTempDirs } from "@antler/kernel/testing";
import type { AntlerClient } from "@antler/plugin-runtime";
import schedulerPlugin, { SCHEDULER } from "@antler/plugin-scheduler";
import subagentsPlugin from "@antler/plugin-subagents";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { approvalClient, type Ledger } from "./approval-fixtures.js";

const temp = useTempDirs();
const open: AntlerClient[] = [];
afterEach(async () => {
  for (const client of open.splice(0)) await client.close();
});

const APPROVAL = {
  rules: [
    { name: "shell", tools: ["bash"] },
    { name: "notes", tools: ["read_notes"], non_interactive: "approve" },
  ],
};

describe("runs that cannot wait for a person", () => {
  it("a scheduled run never pauses: each matching call gets its rule's non_interactive decision at once", async () => {
    const ledger: Ledger = [];
    const { client } = await approvalClient({
      dir: temp.tempDir("antler-approval-sched-"),
      ledger,
      approval: APPROVAL,
      script: (messages) =>
        ToolMessage.isInstance(messages.at(-1))
          ? { text: "nightly done" }
          : {
              toolCalls: [
                { name: "bash", args: { command: "backup" }, id: "call_bash" },
                { name: "read_notes", args: { q: "x" }, id: "call_notes" },
              ],
            },
      plugins: [schedulerPlugin],
    });
    open.push(client);
    const scheduler = client.kernel.scope.resolve(SCHEDULER);
    const task = await scheduler.add("default", { prompt: "nightly backup", at: new Date(Date.now() + 3_600_000).toISOString() });
    const fired = await scheduler.trigger("default", task.id);
    const occurrence = await fired.done;
    expect(occurrence.status).toBe("succeeded");
    expect(ledger).toEqual([{ tool: "read_notes", args: { q: "x" } }]);
    const threadId = occurrence.thread_id as string;
    const [run] = await client.listRuns(threadId);
    expect(run?.status).toBe("success");
    const thread = await client.getThread(threadId);
    const refusal = thread.messages.find((m) => m.type === "tool" && m.tool_call_id === "call_bash");
    expect(refusal?.content).toContain('this run cannot wait for a person (non-interactive), and rule "shell" rejects by default.');
    expect(await client.countPausedRuns()).toBe(0);
  });

  it("a subagent never pauses (it runs inside the task tool): its calls get the rule's non_interactive decision", async () => {
    const ledger: Ledger = [];
    const { client, calls } = await approvalClient({
      dir: temp.tempDir("antler-approval-sub-"),
      ledger,
      approval: APPROVAL,
      config: { subagents: { enabled: true } },
      script: (messages) => {
        const first = String(messages.find((m) => HumanMessage.isInstance(m))?.content ?? "");
        if (ToolMessage.isInstance(messages.at(-1))) return { text: `finished: ${String(messages.at(-1)?.content).slice(0, 300)}` };
        if (first === "delegate it")
          return {
            toolCalls: [{ name: "task", args: { description: "shell work", prompt: "use the shell", subagent_type: "general-purpose" } }],
          };
        return { toolCalls: [{ name: "bash", args: { command: "id" }, id: "call_sub_bash" }] };
      },
      plugins: [{ plugin: subagentsPlugin, config: { agents: { "general-purpose": { model: "m" } } } }],
    });
    open.push(client);
    const result = await client.invoke("delegate it", { threadId: "t1" });
    expect(result.status).toBe("success");
    expect(ledger).toEqual([]);
    // The subagent's model read the refusal as its bash call's result.
    const refusals = calls().flatMap((c) => c.messages.filter((m) => ToolMessage.isInstance(m) && m.tool_call_id === "call_sub_bash"));
    expect(String(refusals[0]?.content)).toContain('this run cannot wait for a person (a subagent), and rule "shell" rejects by default.');
    expect(await client.countPausedRuns()).toBe(0);
  });
});
