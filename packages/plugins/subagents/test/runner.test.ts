import { type AntlerPlugin, definePlugin, ensureTraceContext, type KernelConfigInput, type RunInfo } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { createTestKernel, runPluginConformance, type Script, ScriptedChatModel, scriptedModelsPlugin } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import subagentsPlugin, { ADMISSION_RUNTIME, isAdmissionRejected, SUBAGENT_RUNNER } from "../src/index.js";

runPluginConformance(subagentsPlugin, {
  validConfig: { runtime: { max_running: 2, max_queued: 4 }, verification: { receipts_enabled: true } },
  invalidConfigs: [{ runtime: { max_running: 0 } }, { verification: { receipts_enabled: "yes" } }, { agents: { bash: { max_turns: -1 } } }],
});

const kernels: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const k of kernels.splice(0)) await k.close();
});

/** `echo` tool, and a recorder of run starts. */
function toolsPlugin(started: RunInfo[] = []): AntlerPlugin {
  return definePlugin({
    name: "test-echo",
    version: "0.1.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.tools.add(
        defineTool({
          name: "echo",
          description: "Echoes text.",
          schema: z.object({ text: z.string() }),
          run: ({ text }) => `echo: ${text}`,
        }),
      );
      ctx.tools.add(defineTool({ name: "other", description: "Another tool.", schema: z.object({}), run: () => "other" }));
      ctx.hooks.runStart.tap((run) => void started.push(run));
    },
  });
}

async function boot(
  sub: Script,
  config: Partial<KernelConfigInput> = {},
  pluginConfig: Record<string, unknown> = {},
  started: RunInfo[] = [],
) {
  const scripted = scriptedModelsPlugin({ sub });
  const kernel = await createTestKernel({
    builtins: true,
    config: { models: [{ name: "sub", provider: "scripted" }], title: { enabled: false }, ...config },
    plugins: [scripted, toolsPlugin(started), { plugin: subagentsPlugin, config: pluginConfig }],
  });
  kernels.push(kernel);
  return { kernel, runner: kernel.scope.resolve(SUBAGENT_RUNNER), sub: () => scripted.models.get("sub") };
}

const request = { userId: "default", threadId: "batch-1" };

describe("SUBAGENT_RUNNER from the kernel's root scope (how batches use it)", () => {
  it("runs a subagent to its end with receipts, the given trace id and its own derived checkpoint thread", async () => {
    const started: RunInfo[] = [];
    const t = await boot(
      [{ toolCalls: [{ name: "echo", args: { text: "hi" } }] }, { text: "Echoed [r1 echo]." }],
      { subagents: { custom_agents: { echoer: { description: "Echoes.", system_prompt: "Echo things.", tools: ["echo"] } } } },
      {},
      started,
    );
    const outcome = await t.runner.run({
      ...request,
      prompt: "echo hi",
      subagentType: "echoer",
      traceId: "trace-from-batch",
      acceptanceCriteria: ["file_written:x.txt", "it echoed"],
    });
    expect(outcome).toMatchObject({ status: "completed", result: "Echoed [r1 echo].", model: "sub", traceId: "trace-from-batch" });
    expect(outcome.receipts).toMatchObject([{ id: "r1", tool: "echo", status: "success" }]);
    expect(outcome.citations).toMatchObject({ verdict: "CONSISTENT", total: 1, invalid: 0 });
    expect(outcome.acceptance?.criteria.map((c) => c.verdict)).toEqual(["UNMET", "UNVERIFIED"]);
    expect(outcome.checkpointThreadId).toMatch(/^default\/batch-1\/subagents\/[0-9a-f-]{36}$/);
    expect(started).toMatchObject([{ traceId: "trace-from-batch", threadId: "batch-1", userId: "default" }]);
    // Allow list: only echo was bound.
    expect(t.sub()?.calls[0]?.tools).toEqual(["echo"]);
  });

  it("inside a trace scope, runs the subagent on the scope's id and reports that id, over a carried one", async () => {
    const started: RunInfo[] = [];
    const t = await boot([{ text: "done" }], {}, {}, started);
    const outcome = await ensureTraceContext("lead-scope", () =>
      t.runner.run({ ...request, prompt: "p", subagentType: "general-purpose", traceId: "carried-trace" }),
    );
    expect(outcome).toMatchObject({ status: "completed", traceId: "lead-scope" });
    expect(started.map((r) => r.traceId)).toEqual(["lead-scope"]);
  });

  it("returns a failed outcome listing the available types for an unknown type, without throwing", async () => {
    const t = await boot([]);
    const outcome = await t.runner.run({ ...request, prompt: "p", subagentType: "nope" });
    expect(outcome.status).toBe("failed");
    expect(outcome.error).toBe('unknown subagent type "nope"; available types: general-purpose');
  });

  it("offers the bash type only when bash may run", async () => {
    expect((await boot([])).runner.types()).toEqual(["general-purpose"]);
    expect((await boot([], { sandbox: { allow_host_bash: true } })).runner.types()).toEqual(["general-purpose", "bash"]);
  });

  it("applies a type's deny list on top of all tools, and never gives a subagent task", async () => {
    const t = await boot([{ text: "done" }], {
      subagents: { enabled: true, custom_agents: { limited: { description: "d", system_prompt: "s", disallowed_tools: ["other"] } } },
    });
    await t.runner.run({ ...request, prompt: "p", subagentType: "limited" });
    expect(t.sub()?.calls[0]?.tools).toContain("echo");
    expect(t.sub()?.calls[0]?.tools).not.toContain("other");
    expect(t.sub()?.calls[0]?.tools).not.toContain("task");
  });

  it("stops at max_turns with stop reason turn_capped", async () => {
    const t = await boot(
      { respond: (_m, i) => ({ text: `step ${i}`, toolCalls: [{ name: "echo", args: { text: String(i) } }] }) },
      {
        subagents: { custom_agents: { short: { description: "d", system_prompt: "s", max_turns: 2 } } },
      },
    );
    const outcome = await t.runner.run({ ...request, prompt: "p", subagentType: "short" });
    expect(outcome).toMatchObject({ status: "completed", stopReason: "turn_capped", result: "step 1" });
    expect(t.sub()?.callCount).toBe(2);
  });

  it("reports loop_capped when loop detection withdraws the tools", async () => {
    const t = await boot(
      { respond: () => ({ text: "again", toolCalls: [{ name: "echo", args: { text: "same" } }] }) },
      { loop_detection: { warn_threshold: 2, hard_limit: 3 } },
    );
    const outcome = await t.runner.run({ ...request, prompt: "p", subagentType: "general-purpose" });
    expect(outcome).toMatchObject({ status: "completed", stopReason: "loop_capped" });
  });

  it("reports a model failure as a failed outcome, with or without LLMErrorHandling", async () => {
    for (const enabled of [true, false]) {
      const t = await boot([{ error: "provider exploded" }], { llm_error_handling: { enabled } });
      const outcome = await t.runner.run({ ...request, prompt: "p", subagentType: "general-purpose" });
      expect(outcome.status).toBe("failed");
      expect(outcome.error).toContain("provider exploded");
    }
  });

  it("builds the subagent's model with thinking off, as DeerFlow does, even on a model that supports thinking", async () => {
    // The model answers with the thinking block it was built with.
    const probe = definePlugin({
      name: "thinking-probe",
      version: "0.1.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.models.addProvider({
          id: "probe",
          create: (config) => new ScriptedChatModel(() => ({ text: `mode ${config.options?.mode}` })),
        });
      },
    });
    const kernel = await createTestKernel({
      builtins: true,
      config: {
        models: [
          {
            name: "sub",
            provider: "probe",
            supports_thinking: true,
            when_thinking_enabled: { options: { mode: "thinking" } },
            when_thinking_disabled: { options: { mode: "quick" } },
          },
        ],
        title: { enabled: false },
      },
      plugins: [probe, toolsPlugin(), subagentsPlugin],
    });
    kernels.push(kernel);
    const outcome = await kernel.scope.resolve(SUBAGENT_RUNNER).run({ ...request, prompt: "go", subagentType: "general-purpose" });
    expect(outcome).toMatchObject({ status: "completed", result: "mode quick" });
  });

  it("spends no model call on a title in a subagent run, even with titles on", async () => {
    const t = await boot([{ text: "only answer" }], { title: { enabled: true } });
    const outcome = await t.runner.run({ ...request, prompt: "p", subagentType: "general-purpose" });
    expect(outcome).toMatchObject({ status: "completed", result: "only answer" });
    expect(t.sub()?.callCount).toBe(1);
  });

  it("checks acceptance criteria with receipts disabled, dropping only the receipt labels, citations and listed receipts", async () => {
    const writer = definePlugin({
      name: "test-writer",
      version: "0.1.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.tools.add(
          defineTool({
            name: "write_file",
            description: "Writes a file.",
            schema: z.object({ path: z.string(), content: z.string() }),
            run: ({ path }) => `wrote ${path}`,
          }),
        );
      },
    });
    const scripted = scriptedModelsPlugin({
      sub: [{ toolCalls: [{ name: "write_file", args: { path: "/mnt/user-data/workspace/a.txt", content: "x" } }] }, { text: "done" }],
    });
    const kernel = await createTestKernel({
      builtins: true,
      config: { models: [{ name: "sub", provider: "scripted" }], title: { enabled: false } },
      plugins: [scripted, writer, { plugin: subagentsPlugin, config: { verification: { receipts_enabled: false } } }],
    });
    kernels.push(kernel);
    const outcome = await kernel.scope.resolve(SUBAGENT_RUNNER).run({
      ...request,
      prompt: "p",
      subagentType: "general-purpose",
      acceptanceCriteria: ["file_written:/mnt/user-data/workspace/a.txt", "file_written:/mnt/user-data/workspace/never.txt"],
    });
    expect(outcome.acceptance?.criteria.map((c) => c.verdict)).toEqual(["MET", "UNMET"]);
    expect(outcome.acceptance?.verdict).toBe("UNMET");
    expect(outcome.receipts).toEqual([]);
    expect(outcome.citations).toBeUndefined();
    const calls = scripted.models.get("sub")?.calls ?? [];
    // No label to cite in the tool result, and no citation rules in the subagent's prompt.
    expect(calls[1]?.messages.find((m) => m.getType() === "tool")?.content).toBe("wrote /mnt/user-data/workspace/a.txt");
    expect(calls[0]?.messages.map((m) => m.text).join("\n")).not.toContain("receipt label");
  });
});

describe("antler subagents list", () => {
  it("lists the available types with model, limits and tool lists", async () => {
    const t = await boot([], {
      subagents: {
        enabled: true,
        custom_agents: { reviewer: { description: "Reviews.", system_prompt: "s", tools: ["read_file"], model: "sub" } },
      },
    });
    const command = t.kernel.commands.find((c) => c.name === "subagents list");
    let out = "";
    const stdout = {
      write: (chunk: string) => {
        out += chunk;
        return true;
      },
    } as unknown as NodeJS.WritableStream;
    const code = await command?.run([], { stdout, stderr: stdout, cwd: "/", env: {}, kernel: t.kernel });
    expect(code).toBe(0);
    expect(out).toContain("task tool: on; receipts: on; runtime: 3 running, 64 queued");
    expect(out).toContain("general-purpose (built-in):");
    expect(out).toContain("model inherit, max 150 turns, timeout 1800s; tools: all");
    expect(out).toContain("reviewer: Reviews.\n  model sub, max 50 turns, timeout 1800s; tools: read_file");
    expect(out).not.toContain("bash (built-in)");
  });
});

describe("ADMISSION_RUNTIME", () => {
  it("is one instance per kernel, sized from config, and closed with the kernel", async () => {
    const t = await boot([], {}, { runtime: { max_running: 5, max_queued: 7 } });
    const runtime = t.kernel.scope.resolve(ADMISSION_RUNTIME);
    expect(t.kernel.scope.resolve(ADMISSION_RUNTIME)).toBe(runtime);
    expect([runtime.maxRunning, runtime.maxQueued]).toEqual([5, 7]);
    await t.kernel.close();
    const err = await runtime.submit(async () => 1).catch((e: unknown) => e);
    expect(isAdmissionRejected(err) && err.reason === "closed").toBe(true);
  });
});
