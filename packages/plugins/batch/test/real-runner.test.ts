import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, ensureTraceContext, type Kernel, type RunInfo } from "@antler/kernel";
import { createTestKernel, scriptedModelsPlugin } from "@antler/kernel/testing";
import subagentsPlugin from "@antler/plugin-subagents";
import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, expect, it } from "vitest";
import batchPlugin, { BATCH_SERVICE, BATCH_TASK_TOOL } from "../src/index.js";
import { collect, sleep } from "./fixtures.js";

let kernel: Kernel | undefined;
let dir: string | undefined;
afterEach(async () => {
  await kernel?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("runs a batch through the real subagent runner with a scripted model, recording results, model and verdicts", async () => {
  dir = mkdtempSync(join(tmpdir(), "antler-batch-real-"));
  const runs: RunInfo[] = [];
  const recorder = definePlugin({
    name: "test-run-recorder",
    version: "0.1.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.hooks.runStart.tap((run) => void runs.push(run));
    },
  });
  // The subagent answers from the task it was given; each item's prompt names its number.
  const answer = (messages: BaseMessage[]) => {
    const task = String(messages.find((m) => m.getType() === "human")?.content ?? "");
    return { text: `done: ${/item (\d+)/.exec(task)?.[1] ?? "?"}` };
  };
  kernel = await createTestKernel({
    builtins: true,
    cwd: dir,
    config: { models: [{ name: "sub", provider: "scripted" }], title: { enabled: false } },
    plugins: [
      scriptedModelsPlugin({ sub: { respond: answer } }),
      recorder,
      subagentsPlugin,
      { plugin: batchPlugin, config: { worker: { poll_ms: 20 } } },
    ],
  });
  const tool = (await kernel.assembleTools({ subagentEnabled: true })).find((e) => e.tool.name === BATCH_TASK_TOOL)?.tool;
  const items = Array.from({ length: 5 }, (_, i) => ({
    key: `k${i}`,
    prompt: `Handle item ${i}.`,
    acceptance_criteria: ["the answer is polite"],
  }));
  const reply = (await ensureTraceContext("trace-real-runner", () =>
    tool?.invoke({ title: "real", items, subagent_type: "general-purpose" }, { context: { user_id: "alice", thread_id: "lead-thread" } }),
  )) as { content: string };
  const batchId = /batch_[0-9a-f]{32}/.exec(String(reply.content))?.[0] as string;
  expect(batchId).toBeDefined();

  const client = await kernel.scope.resolve(BATCH_SERVICE).client("alice");
  let status = await client.status(batchId);
  for (let i = 0; i < 500 && status.state === "active"; i++) {
    await sleep(20);
    status = await client.status(batchId);
  }
  expect(status.counts.completed).toBe(5);
  // Execution succeeded; acceptance is a separate tally: free text cannot be checked, so it is UNVERIFIED.
  expect(status.verdicts).toEqual({ MET: 0, UNMET: 0, UNVERIFIED: 5, none: 0 });
  const exported = await collect(client.export(batchId));
  expect(exported.map((e) => e.result)).toEqual(["done: 0", "done: 1", "done: 2", "done: 3", "done: 4"]);
  expect(exported[0]?.outcome).toMatchObject({ model: "sub", checkpoint_thread_id: expect.stringContaining("alice/lead-thread/") });
  expect(exported[0]?.acceptance).toMatchObject({ verdict: "UNVERIFIED" });
  // Each subagent ran in its own run, on the batch's thread and owner, stamped with the submitting trace id.
  const subagentRuns = runs.filter((r) => r.threadId === "lead-thread");
  expect(subagentRuns).toHaveLength(5);
  expect(subagentRuns.every((r) => r.traceId === "trace-real-runner" && r.userId === "alice")).toBe(true);
});
