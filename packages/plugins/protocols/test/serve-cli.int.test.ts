// The protocols under a real `antler serve` (the compiled CLI in a child process, SQLite storage, an OpenAI-compatible
// model server on loopback, a tool from a local plugin file), each driven by its official client library.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type BaseEvent, HttpAgent } from "@ag-ui/client";
import { type OpenAICompatibleServer, startOpenAICompatibleServer } from "@antler/kernel/testing";
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const bin = resolve(here, "../../../kernel/bin/antler.js");
const dists = {
  protocols: resolve(here, "../dist/index.js"),
  gateway: resolve(here, "../../gateway/dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && existsSync(resolve(here, "../../../kernel/dist/bundle/cli.js"));
const ALICE_KEY = "alice-key-0123456789abcdef";

function listening(child: ChildProcess, output: { text: string }): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`antler serve did not start; output so far:\n${output.text}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output.text += chunk.toString();
      const match = output.text.match(/gateway listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (match) {
        clearTimeout(timer);
        resolvePromise(match[1] as string);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`antler serve exited early (${code}):\n${output.text}`)));
  });
}

describe.skipIf(!built)("the protocols under `antler serve` (compiled CLI in a child process; needs a build first)", () => {
  let dir: string;
  let model: OpenAICompatibleServer;
  let child: ChildProcess;
  let url: string;
  const output = { text: "" };

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
        "storage:",
        "  backend: sqlite",
        "title:",
        "  enabled: false",
        "models:",
        "  - name: loopback",
        "    provider: openai",
        "    model: scripted-model",
        `    base_url: ${model.url}`,
        "    api_key: test-key",
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
    child = spawn(process.execPath, [bin, "serve", "--config", join(dir, "config.yaml"), "--port", "0"], {
      cwd: dir,
      env: { ...process.env, ALICE_KEY, ANTLER_CONFIG: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    url = await listening(child, output);
  }, 90_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
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
});
