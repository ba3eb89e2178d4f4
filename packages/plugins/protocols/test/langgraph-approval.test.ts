// An approval pause through the LangGraph-compatible API with the official client: the paused run is `interrupted`
// with the pending calls as its `__interrupt__`, and `command.resume` carries the decision; the same run continues.
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import guardrailsPlugin from "@antler/plugin-guardrails";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ALICE, type ProtocolsGateway, startProtocolsGateway } from "./fixtures.js";

const ran: Array<Record<string, unknown>> = [];
const shellTool = definePlugin({
  name: "shell-tool",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(
      defineTool({
        name: "bash",
        description: "Runs a command.",
        schema: z.object({ command: z.string() }),
        run: (args: { command: string }) => {
          ran.push(args);
          return `ran ${args.command}`;
        },
      }),
      { group: "bash" },
    );
  },
});

// Each thread's first turn calls bash once; after the tool result, the model reports it.
const script = (messages: BaseMessage[]) => {
  const result = messages.at(-1);
  if (ToolMessage.isInstance(result)) return { text: `tool said: ${String(result.content)}` };
  return { toolCalls: [{ name: "bash", args: { command: "make deploy" }, id: `call_${messages.length}` }] };
};

let harness: ProtocolsGateway;
let sdk: Client;

beforeAll(async () => {
  harness = await startProtocolsGateway({
    prefix: "antler-lg-approval-",
    script,
    plugins: [shellTool, guardrailsPlugin],
    config: { approval: { rules: [{ name: "shell", tools: ["bash"] }] } },
  });
  sdk = new Client({ apiUrl: `${harness.gateway.url}/langgraph`, apiKey: ALICE, callerOptions: { maxRetries: 0 } });
});

afterAll(async () => {
  await harness?.close();
});

type Values = { messages: Array<{ type: string; content: string }>; __interrupt__?: Array<{ id: string; value: Record<string, unknown> }> };

describe("approval over the LangGraph API", () => {
  it("a paused run is interrupted with the pending calls; command.resume approves it and the same run runs the tool once", async () => {
    ran.length = 0;
    const thread = await sdk.threads.create();
    const first = (await sdk.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "deploy" }] },
    })) as Values;
    const [pending] = first.__interrupt__ ?? [];
    expect(pending?.value).toMatchObject({ kind: "approval", calls: [{ tool: "bash", args: { command: "make deploy" }, rule: "shell" }] });
    expect(ran).toEqual([]);
    const [run] = await sdk.runs.list(thread.thread_id);
    expect(run?.status).toBe("interrupted");
    expect((await sdk.threads.get(thread.thread_id)).status).toBe("interrupted");

    const parts: Array<{ event: string; data: unknown }> = [];
    for await (const part of sdk.runs.stream(thread.thread_id, "agent", {
      command: { resume: { decision: "approve" } },
      streamMode: "values",
    })) {
      parts.push({ event: part.event, data: part.data });
    }
    expect((parts[0]?.data as { run_id?: string } | undefined)?.run_id).toBe(run?.run_id);
    const last = parts.filter((p) => p.event === "values").at(-1)?.data as Values;
    expect(last.__interrupt__).toBeUndefined();
    expect(last.messages.at(-1)?.content).toBe("tool said: ran make deploy");
    expect(ran).toEqual([{ command: "make deploy" }]);
    expect((await sdk.runs.list(thread.thread_id)).map((r) => r.status)).toEqual(["success"]);
  });

  it("a decision the tool's schema refuses is an HTTP error naming it, and the run stays interrupted", async () => {
    ran.length = 0;
    const thread = await sdk.threads.create();
    await sdk.runs.wait(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "deploy" }] } });
    await expect(
      sdk.runs.wait(thread.thread_id, "agent", { command: { resume: { decision: "edit", args: { command: 7 } } } }),
    ).rejects.toThrow(/HTTP 400.*the edited arguments for bash do not fit its schema/s);
    expect((await sdk.runs.list(thread.thread_id))[0]?.status).toBe("interrupted");
    const rejected = (await sdk.runs.wait(thread.thread_id, "agent", {
      command: { resume: { decision: "reject", reason: "not today" } },
    })) as Values;
    expect(rejected.messages.at(-1)?.content).toContain("a person rejected this call: not today");
    expect(ran).toEqual([]);
  });
});
