// The plugin of docs/guides/writing-a-plugin.md (examples/plugin-authoring/tool-budget.js), run for real: a kernel
// with the runtime, a scripted model and the plugin loaded by path from a config.yaml, over AntlerClient and the CLI.
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type AgentState, createToken, definePlugin } from "@antler/kernel";
import { defineTool, hookContext, pluginAuthoringApi } from "@antler/kernel/authoring";
import { runCli, type ScriptFunction, scriptedModelsPlugin, useTempDirs } from "@antler/kernel/testing";
import type { ToolRuntime } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import toolBudget from "../../../../examples/plugin-authoring/tool-budget.js";
import { AntlerClient, type SerializedMessage, type StreamEvent } from "../src/index.js";

const EXAMPLE = resolve(import.meta.dirname, "../../../../examples/plugin-authoring/tool-budget.js");
const GUIDE = resolve(import.meta.dirname, "../../../../docs/guides/writing-a-plugin.md");
const temp = useTempDirs();
const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** The id of the run scope that built it: which run's scope `hookContext(...).resolve` reached. */
const RunScopeId = createToken<string>("test.run-scope-id");

/** Test tools, and a probe recording what `hookContext` says inside a node hook and a wrap hook. */
function toolsAndProbe(seen: Array<{ hook: string; runId: string | undefined; contextRunId: unknown; scope: string; turn: number }>) {
  return definePlugin({
    name: "test-tools",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.provide(RunScopeId, { lifetime: "run", useFactory: (scope) => scope.id });
      for (const name of ["echo", "wipe"]) {
        // A tool reaches the same run scope: hookContext({ state, runtime }) with its ToolRuntime.
        const run = ({ text }: { text: string }, runtime: ToolRuntime) => {
          const scope = hookContext({ state: runtime.state as AgentState, runtime }).resolve(RunScopeId);
          seen.push({ hook: `tool ${name}`, runId: scope, contextRunId: (runtime.context as { run_id?: string }).run_id, scope, turn: 0 });
          return text;
        };
        ctx.tools.add(defineTool({ name, description: `${name} the text`, schema: z.object({ text: z.string() }), run }));
      }
      ctx.middleware.add({
        name: "probe",
        beforeAgent: (state, runtime) => {
          const hook = hookContext(state, runtime);
          const scope = hook.resolve(RunScopeId);
          seen.push({ hook: "beforeAgent", runId: hook.runId, contextRunId: runtime.context.run_id, scope, turn: hook.turnNumber });
        },
        wrapModelCall: (request, handler) => {
          const hook = hookContext(request);
          const scope = hook.resolve(RunScopeId);
          seen.push({
            hook: "wrapModelCall",
            runId: hook.runId,
            contextRunId: request.runtime.context.run_id,
            scope,
            turn: hook.turnNumber,
          });
          return handler(request);
        },
      });
    },
  });
}

async function turn(client: AntlerClient, prompt: string, threadId: string) {
  const events: StreamEvent[] = [];
  for await (const event of client.stream(prompt, { threadId })) events.push(event);
  const end = events.at(-1);
  return { end: end?.type === "end" ? end.data : undefined };
}

describe("the plugin of the writing-a-plugin guide (refuse a tool, end a turn, a run-scoped service, a command)", () => {
  it("refuses blocked and over-budget calls as 'refused', keeps one budget per run, and ends the third turn with stop_reason turn_limit", async () => {
    const script: ScriptFunction = (_messages, i) =>
      [
        { toolCalls: [{ id: "a", name: "echo", args: { text: "first" } }] },
        { toolCalls: [{ id: "b", name: "echo", args: { text: "over budget" } }] },
        { toolCalls: [{ id: "w", name: "wipe", args: { text: "everything" } }] },
        { text: "done" },
        { toolCalls: [{ id: "c", name: "echo", args: { text: "new run, new budget" } }] },
        { text: "second" },
      ][i] ?? { text: "the model should not be called again" };
    const scripted = scriptedModelsPlugin({ m: script });
    const seen: Parameters<typeof toolsAndProbe>[0] = [];
    const client = await AntlerClient.create({
      config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
      plugins: [
        scripted,
        toolsAndProbe(seen),
        { plugin: toolBudget(pluginAuthoringApi), config: { max_tool_calls: 1, max_turns: 2, blocked_tools: ["wipe"] } },
      ],
      env: {},
      discover: false,
    });
    closing.push(() => client.close());

    const first = await turn(client, "go", "t1");
    const second = await turn(client, "again", "t1");
    const third = await turn(client, "and again", "t1");
    // Past the limit every turn ends the same way (the previous turn's stop_reason is cleared, then set again).
    const fourth = await turn(client, "once more", "t1");

    const messages = (await client.getThread("t1")).messages;
    const tool = (id: string) => messages.find((m): m is SerializedMessage => m.type === "tool" && m.tool_call_id === id);
    expect(tool("a")).toMatchObject({ status: "success", content: "first" });
    expect(tool("b")).toMatchObject({
      status: "error",
      content: "Refused: echo was not run: this run already used its 1 tool calls; answer with what you have.",
    });
    expect(tool("b")?.additional_kwargs?.antler_tool_meta).toMatchObject({ error_type: "refused", recoverable_by_model: true });
    expect(tool("w")).toMatchObject({ status: "error", content: "Refused: wipe was not run: it is blocked on this server." });
    // The budget is run-scoped: the second turn is a new run with a fresh one.
    expect(tool("c")).toMatchObject({ status: "success", content: "new run, new budget" });

    expect(first.end?.stop_reason).toBeNull();
    expect(second.end?.stop_reason).toBeNull();
    expect(third.end?.stop_reason).toBe("turn_limit");
    expect(fourth.end?.stop_reason).toBe("turn_limit");
    expect(messages.at(-1)).toMatchObject({ type: "ai", content: "This thread reached its limit of 2 turns. Please start a new thread." });
    expect(scripted.models.get("m")?.calls).toHaveLength(6);

    // Every hook saw its run's id (the node hook through the graph's config) and the thread's turn number.
    const runIds = [first, second, third, fourth].map((t) => t.end?.run_id);
    expect(new Set(seen.map((s) => s.runId))).toEqual(new Set(runIds));
    for (const s of seen) expect([s.contextRunId, s.scope]).toEqual([s.runId, s.runId]);
    expect(seen.filter((s) => s.hook === "tool echo").map((s) => s.runId)).toEqual([runIds[0], runIds[1]]);
    expect(seen.filter((s) => s.hook === "beforeAgent").map((s) => [s.runId, s.turn])).toEqual(runIds.map((id, i) => [id, i + 1]));
  });

  it("adds `antler budget show`, loaded by path from config.yaml", async () => {
    const dir = temp.tempDir("antler-budget-cli-");
    writeFileSync(
      join(dir, "config.yaml"),
      `plugins:\n  - path: ${JSON.stringify(EXAMPLE)}\n    config:\n      max_tool_calls: 3\n      blocked_tools: [bash]\n`,
    );
    const { code, out } = await runCli(["budget", "show", "--config", join(dir, "config.yaml")], { cwd: dir });
    expect(code).toBe(0);
    expect(out).toBe("max_tool_calls: 3\nmax_turns: 20\nblocked_tools: bash\n");
    // Its declared --json option, parsed by the CLI; an undeclared one is refused before it runs.
    const json = await runCli(["budget", "show", "--json", "--config", join(dir, "config.yaml")], { cwd: dir });
    expect(JSON.parse(json.out)).toEqual({ max_tool_calls: 3, max_turns: 20, blocked_tools: ["bash"] });
    const typo = await runCli(["budget", "show", "--jsn", "--config", join(dir, "config.yaml")], { cwd: dir });
    expect(typo.code).toBe(2);
    expect(typo.err).toContain("unknown option --jsn (did you mean --json?)");
  });

  it("is the plugin printed in the writing-a-plugin guide, and imports nothing from @langchain", () => {
    const source = readFileSync(EXAMPLE, "utf8");
    const guide = readFileSync(GUIDE, "utf8");
    const block = /```js\n(\/\/ tool-budget\.js[\s\S]*?)```/.exec(guide)?.[1];
    expect(block, "the guide has a ```js block starting with // tool-budget.js").toBeDefined();
    // The guide shows the file from its default export on; the file's header comment is the only difference.
    expect(source.slice(source.indexOf("export default"))).toBe(block?.slice(block.indexOf("export default")));
    for (const text of [source, block ?? ""]) {
      expect(text).not.toMatch(/@langchain\//);
      expect(text).not.toMatch(/\bimport\b|\brequire\(/);
    }
  });
});
