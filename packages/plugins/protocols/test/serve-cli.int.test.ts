// The protocols under a real `antler serve` (the compiled CLI in a child process, SQLite storage, an OpenAI-compatible
// model server on loopback, a tool from a local plugin file), each driven by its official client library.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type BaseEvent, HttpAgent } from "@ag-ui/client";
import {
  type AntlerServe,
  antlerCliBuilt,
  loopbackModelConfig,
  type OpenAICompatibleServer,
  startAntlerServe,
  startOpenAICompatibleServer,
} from "@antler/kernel/testing";
import { Client } from "@langchain/langgraph-sdk";
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const dists = {
  protocols: resolve(here, "../dist/index.js"),
  gateway: resolve(here, "../../gateway/dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && antlerCliBuilt();
const ALICE_KEY = "alice-key-0123456789abcdef";

describe.skipIf(!built)("the protocols under `antler serve` (compiled CLI in a child process; needs a build first)", () => {
  let dir: string;
  let model: OpenAICompatibleServer;
  let serve: AntlerServe;
  let url: string;

  beforeAll(async () => {
    // A tool call for "look up", its answer after the tool result, an echo otherwise; text in several deltas.
    model = await startOpenAICompatibleServer({
      handler: (body) => {
        const last = body.messages.at(-1);
        if (last?.role === "tool") return { text: "The word means: a test word." };
        const text = typeof last?.content === "string" ? last.content : "";
        if (text.includes("look up")) return { toolCalls: [{ name: "lookup", args: { word: "antler" } }] };
        return { text: `You said: ${text}` };
      },
    });
    dir = mkdtempSync(join(tmpdir(), "antler-protocols-serve-"));
    writeFileSync(
      join(dir, "lookup-tool.mjs"),
      [
        "export default ({ definePlugin, defineTool, z }) => definePlugin({",
        '  name: "lookup-tool", version: "1.0.0", kernel: "^0.1.0",',
        "  setup(ctx) {",
        "    ctx.tools.add(defineTool({",
        '      name: "lookup", description: "Looks a word up.", schema: z.object({ word: z.string() }),',
        '      run: ({ word }) => JSON.stringify({ word, meaning: "a test word" }),',
        "    }));",
        "  },",
        "});",
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "config.yaml"),
      [
        ...loopbackModelConfig(model.url),
        "plugins:",
        `  - path: ${JSON.stringify(dists.openai)}`,
        "  - path: ./lookup-tool.mjs",
        `  - path: ${JSON.stringify(dists.gateway)}`,
        "    config:",
        "      auth:",
        "        api_keys:",
        "          - { key: $ALICE_KEY, user: alice }",
        `  - path: ${JSON.stringify(dists.protocols)}`,
        "",
      ].join("\n"),
    );
    serve = await startAntlerServe({ cwd: dir, env: { ALICE_KEY } });
    url = serve.url;
  }, 90_000);

  afterAll(async () => {
    await serve?.stop();
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("AI SDK: DefaultChatTransport streams a tool call and the answer, and the thread keeps both turns", async () => {
    const transport = new DefaultChatTransport<UIMessage>({ api: `${url}/ai-sdk/chat`, headers: { authorization: `Bearer ${ALICE_KEY}` } });
    const chatId = `cli-ai-sdk-${Date.now()}`;
    const user: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "please look up antler" }] };
    const stream = await transport.sendMessages({
      chatId,
      messages: [user],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream })) last = message;
    const parts = last?.parts ?? [];
    expect(parts.find((p) => p.type === "tool-lookup")).toMatchObject({
      state: "output-available",
      input: { word: "antler" },
      output: { word: "antler", meaning: "a test word" },
    });
    expect(parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)).toContain("The word means: a test word.");
    const state = await fetch(`${url}/api/threads/${chatId}/state`, { headers: { authorization: `Bearer ${ALICE_KEY}` } });
    const messages = ((await state.json()) as { messages: Array<{ type: string }> }).messages;
    expect(messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    // The message metadata names the run and its trace id, as the run record does.
    const metadata = last?.metadata as { run_id: string; trace_id: string };
    const runs = await fetch(`${url}/api/threads/${chatId}/runs`, { headers: { authorization: `Bearer ${ALICE_KEY}` } });
    const [run] = ((await runs.json()) as { runs: Array<{ run_id: string; trace_id: string; status: string }> }).runs;
    expect(run).toMatchObject({ run_id: metadata.run_id, trace_id: metadata.trace_id, status: "success" });
  });

  it("AG-UI: HttpAgent.runAgent gets a tool call with its result and the answer, in AG-UI's order", async () => {
    const threadId = `cli-ag-ui-${Date.now()}`;
    const agent = new HttpAgent({ url: `${url}/ag-ui`, threadId, headers: { authorization: `Bearer ${ALICE_KEY}` } });
    agent.addMessage({ id: "u1", role: "user", content: "please look up antler" });
    const events: BaseEvent[] = [];
    await agent.runAgent({}, { onEvent: ({ event }) => void events.push(event) });
    const types: string[] = events.map((e) => e.type);
    expect(types[0]).toBe("RUN_STARTED");
    expect(types.at(-1)).toBe("RUN_FINISHED");
    for (const type of ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT", "TEXT_MESSAGE_CONTENT"])
      expect(types).toContain(type);
    expect(types.indexOf("TOOL_CALL_RESULT")).toBeLessThan(types.indexOf("TEXT_MESSAGE_START"));
    expect(agent.messages.at(-1)).toMatchObject({ role: "assistant", content: "The word means: a test word." });
  });

  it("LangGraph: the SDK's Client creates a thread, streams a run with a tool call, waits for one, and reads the state", async () => {
    const sdk = new Client({ apiUrl: `${url}/langgraph`, apiKey: ALICE_KEY, callerOptions: { maxRetries: 0 } });
    const [assistant] = await sdk.assistants.search({ graphId: "agent" });
    expect(assistant?.assistant_id).toBe("agent");
    const thread = await sdk.threads.create({ metadata: { source: "cli-test" } });
    const events: string[] = [];
    const tuples: string[] = [];
    for await (const part of sdk.runs.stream(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "please look up antler" }] },
      streamMode: ["values", "messages-tuple"],
    })) {
      events.push(part.event);
      if (part.event === "messages") {
        const [chunk] = part.data as unknown as [{ type: string; content: string; tool_calls?: Array<{ name: string }> }];
        if (chunk.tool_calls?.length) tuples.push(`call:${chunk.tool_calls[0]?.name}`);
        else if (chunk.type === "tool") tuples.push("tool-result");
        else if (chunk.content) tuples.push("text");
      }
    }
    expect(events[0]).toBe("metadata");
    expect(events).toContain("values");
    expect(tuples.indexOf("call:lookup")).toBeLessThan(tuples.indexOf("tool-result"));
    expect(tuples.lastIndexOf("text")).toBeGreaterThan(tuples.indexOf("tool-result"));
    const waited = (await sdk.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "hello" }] },
    })) as { messages: Array<{ type: string; content: string }> };
    expect(waited.messages.at(-1)).toMatchObject({ type: "ai", content: "You said: hello" });
    const state = await sdk.threads.getState<{ messages: Array<{ type: string }> }>(thread.thread_id);
    expect(state.values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai", "human", "ai"]);
    const runs = await sdk.runs.list(thread.thread_id);
    expect(runs.map((r) => r.status)).toEqual(["success", "success"]);
    expect((await sdk.threads.get(thread.thread_id)).status).toBe("idle");
  });
});
