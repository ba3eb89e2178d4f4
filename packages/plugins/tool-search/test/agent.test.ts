// Real agent turns (AntlerClient, the default pipeline, SQLite checkpoints) with a scripted model and a plugin
// contributing tools that config.yaml defers by glob. The model's calls show what was bound and prompted.
import { type AntlerPlugin, type AntlerTool, definePlugin, type KernelConfigInput } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { type ScriptedCall, type ScriptedStep, scriptedModelsPlugin, useTempDirs } from "@antler/kernel/testing";
import { AntlerClient, type StreamEvent } from "@antler/plugin-runtime";
import { SystemMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import toolSearchPlugin, { type ToolSearchSectionInput } from "../src/index.js";

const temp = useTempDirs();
const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

function acmeTool(name: string, description: string): AntlerTool {
  return defineTool({
    name,
    description,
    schema: z.object({ text: z.string().describe("What to send.") }),
    run: ({ text }) => `${name}:${text}`,
  });
}

/** Tools of an imaginary integration; `names` is read at every assembly, so a test can change the catalog. */
function acmePlugin(names: string[]): AntlerPlugin {
  const descriptions: Record<string, string> = {
    acme_echo: "Echo a text back.",
    acme_slack_post_message: "Post a message to a Slack channel.",
    acme_weather_forecast: "Seven-day weather forecast for a city.",
    acme_github_create_issue: "Create an issue in a GitHub repository.",
  };
  return definePlugin({
    name: "acme-tools",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.hooks.assembleTools.tap(async (entries) => [
        ...entries,
        ...names.map((n) => ({ tool: acmeTool(n, descriptions[n] ?? `Tool ${n}.`), plugin: "acme-tools", source: "plugin" as const })),
        { tool: acmeTool("local_note", "Write a note (never deferred)."), plugin: "acme-tools", source: "plugin" as const },
      ]);
    },
  });
}

const ALL = ["acme_echo", "acme_slack_post_message", "acme_weather_forecast", "acme_github_create_issue"];

async function client(options: { root: string; steps: ScriptedStep[]; names?: string[]; toolSearch?: ToolSearchSectionInput }) {
  const scripted = scriptedModelsPlugin({ m: options.steps });
  const c = await AntlerClient.create({
    config: {
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      tool_search: { enabled: true, deferred: ["acme_*"], auto_promote_top_k: 0, ...options.toolSearch },
    } as KernelConfigInput,
    plugins: [scripted, acmePlugin(options.names ?? ALL), toolSearchPlugin],
    cwd: options.root,
    env: {},
    discover: false,
  });
  clients.push(c);
  return { client: c, calls: (): ScriptedCall[] => scripted.models.get("m")?.calls ?? [] };
}

async function turn(c: AntlerClient, text: string, threadId: string) {
  const events: StreamEvent[] = [];
  for await (const e of c.stream(text, { threadId })) events.push(e);
  const tools = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "tool" ? [e.data] : []));
  return { events, tools };
}

const systemText = (call: ScriptedCall | undefined) => {
  const first = call?.messages[0];
  return SystemMessage.isInstance(first) ? first.text : "";
};
const acme = (tools: readonly string[]) => tools.filter((t) => t.startsWith("acme_"));

describe("deferred tools in a real agent turn", () => {
  it("lists deferred names in the prompt and binds none of their schemas, only tool_search and the other tools", async () => {
    const { client: c, calls } = await client({ root: temp.tempDir(), steps: [{ text: "hi" }] });
    await turn(c, "hello", "t1");
    const [first] = calls();
    expect(first?.tools).toContain("tool_search");
    expect(first?.tools).toContain("local_note");
    expect(acme(first?.tools ?? [])).toEqual([]);
    const prompt = systemText(first);
    expect(prompt).toContain("<available-deferred-tools>");
    for (const name of ALL) expect(prompt).toContain(`\n${name}\n`);
    expect(prompt).not.toContain("\nlocal_note\n");
  });

  it("refuses a deferred tool the model was never shown, then runs it once tool_search loaded it", async () => {
    const { client: c, calls } = await client({
      root: temp.tempDir(),
      steps: [
        { toolCalls: [{ name: "acme_echo", args: { text: "guess" }, id: "c-guess" }] },
        { toolCalls: [{ name: "tool_search", args: { query: "select:acme_echo" }, id: "c-search" }] },
        { toolCalls: [{ name: "acme_echo", args: { text: "hello" }, id: "c-echo" }] },
        { text: "done" },
      ],
    });
    const { tools } = await turn(c, "echo hello", "t1");
    expect(tools.map((t) => [t.tool_call_id, t.status])).toEqual([
      ["c-guess", "error"],
      ["c-search", "success"],
      ["c-echo", "success"],
    ]);
    expect(tools[0]?.content).toContain("ANTLER_ERR_TOOL_SEARCH_NOT_LOADED");
    expect(tools[0]?.content).toContain('Call tool_search with "select:acme_echo" first');
    expect(tools[1]?.content).toContain("Loaded 1 tool, callable now: acme_echo.");
    expect(tools[1]?.content).toContain('"name":"acme_echo"');
    expect(tools[1]?.content).toContain('"text":{"type":"string","description":"What to send."}');
    expect(tools[2]?.content).toBe("acme_echo:hello");
    const bound = calls().map((call) => acme(call.tools));
    expect(bound).toEqual([[], [], ["acme_echo"], ["acme_echo"]]);
  });

  it("refuses a deferred call made in the same response as the tool_search that loads it, and runs it on the next step", async () => {
    const { client: c } = await client({
      root: temp.tempDir(),
      steps: [
        {
          toolCalls: [
            { name: "tool_search", args: { query: "select:acme_echo" }, id: "c-search" },
            { name: "acme_echo", args: { text: "eager" }, id: "c-eager" },
          ],
        },
        { toolCalls: [{ name: "acme_echo", args: { text: "now" }, id: "c-now" }] },
        { text: "done" },
      ],
    });
    const { tools } = await turn(c, "echo", "t1");
    // The two calls of one response run in parallel: their results arrive in either order.
    expect(Object.fromEntries(tools.map((t) => [t.tool_call_id, t.status]))).toEqual({
      "c-search": "success",
      "c-eager": "error",
      "c-now": "success",
    });
    expect(tools.at(-1)?.tool_call_id).toBe("c-now");
  });

  it("returns a tool's schema once when two parallel tool_search calls match it: the first call carries it, the second names that call", async () => {
    const { client: c, calls } = await client({
      root: temp.tempDir(),
      steps: [
        {
          toolCalls: [
            { name: "tool_search", args: { query: "select:acme_echo,acme_weather_forecast" }, id: "c-first" },
            { name: "tool_search", args: { query: "select:acme_echo,acme_slack_post_message" }, id: "c-second" },
          ],
        },
        { text: "done" },
      ],
    });
    const { tools } = await turn(c, "load them", "t1");
    const byId = new Map(tools.map((t) => [t.tool_call_id, String(t.content)]));
    const schemasIn = (text: string | undefined) => (text?.match(/"name":"acme_[a-z_]+"/g) ?? []).sort();
    expect(schemasIn(byId.get("c-first"))).toEqual(['"name":"acme_echo"', '"name":"acme_weather_forecast"']);
    expect(schemasIn(byId.get("c-second"))).toEqual(['"name":"acme_slack_post_message"']);
    expect(byId.get("c-second")).toContain("Loaded 2 tools, callable now: acme_echo, acme_slack_post_message.");
    expect(byId.get("c-second")).toContain(
      "Schemas already returned by a parallel tool_search call in this response: acme_echo (call c-first).",
    );
    // Both calls still load what they matched.
    expect(acme(calls()[1]?.tools ?? []).sort()).toEqual(["acme_echo", "acme_slack_post_message", "acme_weather_forecast"]);
  });

  it("keeps a promotion across turns and across clients through the thread's checkpoint", async () => {
    const root = temp.tempDir();
    const a = await client({
      root,
      steps: [{ toolCalls: [{ name: "tool_search", args: { query: "+acme weather forecast" } }] }, { text: "loaded" }],
      toolSearch: { max_results: 1 },
    });
    await turn(a.client, "find the weather tool", "t1");
    expect(acme(a.calls()[1]?.tools ?? [])).toEqual(["acme_weather_forecast"]);
    await a.client.close();

    // Another client (a restarted process) on the same base_dir and thread: the tool is bound from the first call.
    const b = await client({
      root,
      steps: [{ toolCalls: [{ name: "acme_weather_forecast", args: { text: "Lisbon" }, id: "c-w" }] }, { text: "sunny" }],
    });
    const { tools } = await turn(b.client, "and the forecast?", "t1");
    expect(acme(b.calls()[0]?.tools ?? [])).toEqual(["acme_weather_forecast"]);
    expect(tools.map((t) => [t.status, t.content])).toEqual([["success", "acme_weather_forecast:Lisbon"]]);
    // Another thread starts with nothing loaded.
    const c2 = await client({ root, steps: [{ text: "hi" }] });
    await turn(c2.client, "hi", "t2");
    expect(acme(c2.calls()[0]?.tools ?? [])).toEqual([]);
  });

  it("drops promotions when the catalog changes, and says so when the model calls a tool loaded before", async () => {
    const names = ["acme_echo", "acme_weather_forecast"];
    const { client: c, calls } = await client({
      root: temp.tempDir(),
      names,
      steps: [
        { toolCalls: [{ name: "tool_search", args: { query: "select:acme_echo" } }] },
        { text: "loaded" },
        // Turn 2, after a tool was added to the integration:
        { toolCalls: [{ name: "acme_echo", args: { text: "again" }, id: "c-stale" }] },
        { toolCalls: [{ name: "tool_search", args: { query: "select:acme_echo" } }] },
        { toolCalls: [{ name: "acme_echo", args: { text: "again" }, id: "c-fresh" }] },
        { text: "done" },
      ],
    });
    await turn(c, "load echo", "t1");
    expect(acme(calls()[1]?.tools ?? [])).toEqual(["acme_echo"]);

    names.push("acme_github_create_issue");
    const { tools } = await turn(c, "echo again", "t1");
    expect(acme(calls()[2]?.tools ?? [])).toEqual([]);
    expect(systemText(calls()[2])).toContain("\nacme_github_create_issue\n");
    const stale = tools.find((t) => t.tool_call_id === "c-stale");
    expect(stale?.status).toBe("error");
    expect(stale?.content).toContain("the tool catalog has changed since");
    expect(acme(calls()[4]?.tools ?? [])).toEqual(["acme_echo"]);
    expect(tools.find((t) => t.tool_call_id === "c-fresh")).toMatchObject({ status: "success", content: "acme_echo:again" });
  });

  it("answers an invalid regex with a coded error result, and the run goes on", async () => {
    const { client: c } = await client({
      root: temp.tempDir(),
      steps: [{ toolCalls: [{ name: "tool_search", args: { query: "slack(" }, id: "c-bad" }] }, { text: "I will try another query." }],
    });
    const { tools, events } = await turn(c, "post to slack", "t1");
    expect(tools[0]).toMatchObject({ tool_call_id: "c-bad", status: "error" });
    expect(tools[0]?.content).toContain("ANTLER_ERR_TOOL_SEARCH_QUERY");
    expect(tools[0]?.content).toContain('"slack(" is not a valid regular expression');
    expect(events.at(-1)?.type).toBe("end");
  });

  it("auto-promotes the best matches of the user's message before the first model call, and keeps them", async () => {
    const { client: c, calls } = await client({
      root: temp.tempDir(),
      toolSearch: { auto_promote_top_k: 2 },
      steps: [
        { toolCalls: [{ name: "acme_slack_post_message", args: { text: "standup" }, id: "c-post" }] },
        { text: "posted" },
        { text: "ok" },
      ],
    });
    const { tools } = await turn(c, "Post the standup notes to the team's Slack channel", "t1");
    expect(acme(calls()[0]?.tools ?? [])).toEqual(["acme_slack_post_message"]);
    expect(tools).toMatchObject([{ tool_call_id: "c-post", status: "success" }]);
    // The next turn's message matches nothing; the tool loaded by the first one stays.
    await turn(c, "thanks", "t1");
    expect(acme(calls()[2]?.tools ?? [])).toEqual(["acme_slack_post_message"]);
  });

  it("changes nothing while tool_search.enabled is false", async () => {
    const { client: c, calls } = await client({ root: temp.tempDir(), steps: [{ text: "hi" }], toolSearch: { enabled: false } });
    await turn(c, "hello", "t1");
    expect(calls()[0]?.tools).not.toContain("tool_search");
    expect(acme(calls()[0]?.tools ?? [])).toEqual([...ALL].sort());
    expect(systemText(calls()[0])).not.toContain("<available-deferred-tools>");
  });
});
