// `antler acp` as a real child process (the compiled CLI, SQLite storage, an OpenAI-compatible model server on
// loopback, a tool from a local plugin file), driven by the ACP SDK's client side over its stdio, and by Antler's
// own ACP client tool (`invoke_acp_agent`): one Antler distribution calling another over ACP.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  type ClientConnection,
  client,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import {
  antlerBinPath,
  antlerCliBuilt,
  loopbackModelConfig,
  type OpenAICompatibleServer,
  scriptedModelsPlugin,
  startOpenAICompatibleServer,
} from "@antler/kernel/testing";
import { AntlerClient, type StreamEvent } from "@antler/plugin-runtime";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import acpPlugin from "../src/index.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const bin = antlerBinPath();
const dists = {
  acp: resolve(here, "../dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
  guardrails: resolve(here, "../../guardrails/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && antlerCliBuilt();

/** The last user message's text and whether the model is answering a tool result. */
function turnOf(body: { messages: Array<{ role: string; content?: unknown }> }) {
  const lastUser = [...body.messages].reverse().find((m) => m.role === "user");
  return { text: typeof lastUser?.content === "string" ? lastUser.content : "", afterTool: body.messages.at(-1)?.role === "tool" };
}

/** The scripted model of both distributions: a tool, a plan, a clarification, a stall, else an echo. */
function startModel(): Promise<OpenAICompatibleServer> {
  return startOpenAICompatibleServer({
    handler: (body) => {
      const { text, afterTool } = turnOf(body);
      if (text.includes("guarded pair")) {
        if (!afterTool) {
          const words = ["first", "second"];
          return { toolCalls: words.map((word) => ({ name: "counted_lookup", args: { word } })) };
        }
        const results = body.messages.filter((m) => m.role === "tool").slice(-2);
        return { text: `Tools said: ${results.map((m) => String(m.content)).join(" | ")}` };
      }
      if (text.includes("guarded")) {
        // Calls the counted tool (which needs approval) and repeats what the tool answered: its output or a refusal.
        const result = body.messages.at(-1)?.content;
        if (afterTool) return { text: `Tool said: ${typeof result === "string" ? result : JSON.stringify(result)}` };
        return { toolCalls: [{ name: "counted_lookup", args: { word: "guarded" } }] };
      }
      if (text.includes("stall"))
        return afterTool ? { text: "too late", delayMs: 120_000 } : { toolCalls: [{ name: "lookup", args: { word: "stall" } }] };
      if (text.includes("plan")) {
        if (afterTool) return { text: "Planned." };
        const todos = [
          { content: "Look up the word", status: "in_progress" },
          { content: "Write the answer", status: "pending" },
        ];
        return { toolCalls: [{ name: "write_todos", args: { todos } }] };
      }
      const editorCall = [
        ["read the notes", "read_editor_file", { path: "notes.md" }],
        ["write the greeting", "write_editor_file", { path: "src/hello.txt", content: "hi from antler" }],
        ["read outside", "read_editor_file", { path: "/etc/hostname" }],
      ].find(([phrase]) => text.includes(phrase as string));
      if (editorCall) {
        const result = body.messages.at(-1)?.content;
        if (afterTool) return { text: `Tool said: ${typeof result === "string" ? result : JSON.stringify(result)}` };
        return { toolCalls: [{ name: editorCall[1] as string, args: editorCall[2] as Record<string, unknown> }] };
      }
      if (text.includes("ask me")) {
        return {
          toolCalls: [
            { name: "ask_clarification", args: { question: "Which word should I look up?", clarification_type: "missing_info" } },
          ],
        };
      }
      if (text.includes("look up"))
        return afterTool ? { text: "The word means: a test word." } : { toolCalls: [{ name: "lookup", args: { word: "antler" } }] };
      return { text: `You said: ${text}` };
    },
  });
}

/** A distribution folder: config.yaml (SQLite, the loopback model, the lookup tool, plan mode, the acp plugin). */
function writeDistribution(model: OpenAICompatibleServer, extra: string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), "antler-acp-agent-"));
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
      "todo:",
      "  enabled: true",
      "plugins:",
      `  - path: ${JSON.stringify(dists.openai)}`,
      "  - path: ./lookup-tool.mjs",
      `  - path: ${JSON.stringify(dists.acp)}`,
      ...extra,
      "",
    ].join("\n"),
  );
  return dir;
}

/** The editor's answer to `session/request_permission` (the signal aborts on `$/cancel_request`). */
type PermissionHandler = (params: RequestPermissionRequest, signal: AbortSignal) => Promise<RequestPermissionResponse>;

interface AcpProcess {
  child: ChildProcess;
  connection: ClientConnection;
  /** Every `session/update` received, in order. */
  updates: SessionNotification[];
  /** Everything the process wrote to stdout, for the "only protocol frames" check. */
  stdout: string[];
  stderr: { text: string };
  exited: Promise<number | null>;
}

/** Spawns `antler acp` and connects the ACP SDK's client side to its stdio (with a file system on `fsRoot`). */
function startAcp(dir: string, args: string[] = [], fsRoot?: string, onPermission?: PermissionHandler): AcpProcess {
  const child = spawn(process.execPath, [bin, "acp", "--config", join(dir, "config.yaml"), ...args], {
    cwd: dir,
    env: { ...process.env, ANTLER_CONFIG: "", ANTLER_LOG_LEVEL: "info" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const stderr = { text: "" };
  child.stderr?.on("data", (d: Buffer) => {
    stderr.text += d.toString();
  });
  const stdout: string[] = [];
  child.stdout?.on("data", (d: Buffer) => stdout.push(d.toString()));
  const updates: SessionNotification[] = [];
  const app = client({ name: "acp-test-client" }).onNotification("session/update", ({ params }) => {
    updates.push(params);
  });
  if (onPermission) app.onRequest("session/request_permission", ({ params, signal }) => onPermission(params, signal));
  if (fsRoot !== undefined) {
    // An editor's file system: real files, and only under its project folder.
    const inRoot = (path: string) => {
      if (!path.startsWith(`${fsRoot}/`)) throw new Error(`not in the project: ${path}`);
      return path;
    };
    app
      .onRequest("fs/read_text_file", ({ params }) => ({ content: readFileSync(inRoot(params.path), "utf8") }))
      .onRequest("fs/write_text_file", ({ params }) => {
        mkdirSync(dirname(inRoot(params.path)), { recursive: true });
        writeFileSync(params.path, params.content);
        return {};
      });
  }
  const connection = app.connect(
    ndJsonStream(
      Writable.toWeb(child.stdin as Writable) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>,
    ),
  );
  return { child, connection, updates, stdout, stderr, exited };
}

async function stopAcp(p: AcpProcess | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null) return;
  p.child.kill("SIGKILL");
  await p.exited;
}

const updatesOf = (p: AcpProcess, sessionId: string): SessionUpdate[] =>
  p.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);

async function initialize(p: AcpProcess, fs = false) {
  return p.connection.agent.request("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: fs, writeTextFile: fs }, terminal: false },
    clientInfo: { name: "acp-test-client", version: "0.0.0" },
  });
}

/** An in-process client on the distribution's own storage, to read what the ACP process recorded. */
async function readStore(dir: string): Promise<AntlerClient> {
  return AntlerClient.create({
    config: {
      storage: { backend: "sqlite" },
      models: [{ name: "loopback", provider: "scripted" }],
      title: { enabled: false },
      logging: { level: "warn" },
    },
    plugins: [scriptedModelsPlugin({ loopback: [] })],
    cwd: dir,
    env: {},
    discover: false,
  });
}

describe.skipIf(!built)("`antler acp` driven by the ACP SDK's client over stdio (compiled CLI; needs a build first)", () => {
  let model: OpenAICompatibleServer;
  let dir: string;
  let acp: AcpProcess;
  let sessionId: string;

  beforeAll(async () => {
    model = await startModel();
    dir = writeDistribution(model);
    acp = startAcp(dir);
  }, 90_000);

  afterAll(async () => {
    await stopAcp(acp);
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("initialize answers protocol version 1, loadSession, text and embedded-context prompts, and names Antler", async () => {
    const init = await initialize(acp);
    expect(init.protocolVersion).toBe(PROTOCOL_VERSION);
    expect(init.agentCapabilities).toMatchObject({
      loadSession: true,
      promptCapabilities: { image: false, audio: false, embeddedContext: true },
      sessionCapabilities: { list: {} },
    });
    expect(init.agentInfo?.name).toBe("antler");
  }, 90_000);

  it("session/new opens an Antler thread of the configured user, with the client's cwd recorded", async () => {
    const session = await acp.connection.agent.request("session/new", { cwd: "/home/dev/project", mcpServers: [] });
    sessionId = session.sessionId;
    const store = await readStore(dir);
    try {
      const thread = await store.getThreadRecord(sessionId, { userId: "default" });
      expect(thread.metadata).toMatchObject({ acp_cwd: "/home/dev/project" });
    } finally {
      await store.close();
    }
  });

  it("a prompt streams the answer as several agent_message_chunk updates and ends end_turn with the run in _meta", async () => {
    const response = await acp.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello there" }] });
    expect(response.stopReason).toBe("end_turn");
    const chunks = updatesOf(acp, sessionId).filter((u) => u.sessionUpdate === "agent_message_chunk");
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((u) => (u.content.type === "text" ? u.content.text : "")).join("")).toBe("You said: hello there");
    const runId = response._meta?.["antler/run_id"];
    expect(response._meta?.["antler/trace_id"]).toMatch(/^[0-9a-f]{32}$/);
    const store = await readStore(dir);
    try {
      expect(await store.getRun(sessionId, String(runId), { userId: "default" })).toMatchObject({ status: "success" });
    } finally {
      await store.close();
    }
  });

  it("a tool call goes out pending, then in_progress, then completed with the tool's title, kind and output", async () => {
    const before = acp.updates.length;
    const response = await acp.connection.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "please look up antler" }],
    });
    expect(response.stopReason).toBe("end_turn");
    const turn = acp.updates.slice(before).map((n) => n.update);
    const calls = turn.filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");
    expect(calls).toHaveLength(3);
    const [announced, running, done] = calls;
    expect(announced).toMatchObject({
      sessionUpdate: "tool_call",
      title: "lookup",
      kind: "other",
      status: "pending",
      rawInput: { word: "antler" },
    });
    const id = (announced as { toolCallId: string }).toolCallId;
    expect(running).toMatchObject({ sessionUpdate: "tool_call_update", toolCallId: id, status: "in_progress" });
    expect(done).toMatchObject({ sessionUpdate: "tool_call_update", toolCallId: id, status: "completed" });
    expect(JSON.stringify((done as { content: unknown }).content)).toContain("a test word");
    // The answer comes after the tool's result.
    const answerAt = turn.findIndex((u) => u.sessionUpdate === "agent_message_chunk");
    expect(answerAt).toBeGreaterThan(turn.indexOf(done as SessionUpdate));
  });

  it("write_todos reaches the client as a plan with the todo list's entries and statuses", async () => {
    const { sessionId: planned } = await acp.connection.agent.request("session/new", { cwd: dir, mcpServers: [] });
    const response = await acp.connection.agent.request("session/prompt", {
      sessionId: planned,
      prompt: [{ type: "text", text: "plan it" }],
    });
    expect(response.stopReason).toBe("end_turn");
    const plans = updatesOf(acp, planned).filter((u) => u.sessionUpdate === "plan");
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatchObject({
      entries: [
        { content: "Look up the word", status: "in_progress", priority: "medium" },
        { content: "Write the answer", status: "pending", priority: "medium" },
      ],
    });
    expect(updatesOf(acp, planned).find((u) => u.sessionUpdate === "tool_call")).toMatchObject({ kind: "think" });
  });

  it("a clarification is asked as the agent's message and the turn ends end_turn, waiting for the next prompt", async () => {
    const { sessionId: asking } = await acp.connection.agent.request("session/new", { cwd: dir, mcpServers: [] });
    const response = await acp.connection.agent.request("session/prompt", {
      sessionId: asking,
      prompt: [{ type: "text", text: "ask me" }],
    });
    expect(response.stopReason).toBe("end_turn");
    const text = updatesOf(acp, asking)
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => (u.content.type === "text" ? u.content.text : ""))
      .join("");
    expect(text).toContain("Which word should I look up?");
  });

  it("session/cancel mid-turn answers the prompt cancelled, and the Antler run record ends cancelled", async () => {
    const { sessionId: stalled } = await acp.connection.agent.request("session/new", { cwd: dir, mcpServers: [] });
    const prompt = acp.connection.agent.request("session/prompt", { sessionId: stalled, prompt: [{ type: "text", text: "please stall" }] });
    // The tool has run and the model is now answering (slowly): cancel there.
    await expect
      .poll(() => updatesOf(acp, stalled).some((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed"), {
        timeout: 30_000,
      })
      .toBe(true);
    // One turn per session: a second prompt meanwhile is refused, and the first goes on.
    await expect(
      acp.connection.agent.request("session/prompt", { sessionId: stalled, prompt: [{ type: "text", text: "and this?" }] }),
    ).rejects.toMatchObject({ code: -32600, message: expect.stringContaining("already running") });
    await acp.connection.agent.notify("session/cancel", { sessionId: stalled });
    const response = await prompt;
    expect(response.stopReason).toBe("cancelled");
    const store = await readStore(dir);
    try {
      const runs = await store.listRuns(stalled, { userId: "default" });
      expect(runs.map((r) => r.status)).toEqual(["cancelled"]);
      expect(runs[0]?.run_id).toBe(response._meta?.["antler/run_id"]);
    } finally {
      await store.close();
    }
    // The session takes the next prompt.
    const next = await acp.connection.agent.request("session/prompt", {
      sessionId: stalled,
      prompt: [{ type: "text", text: "still there?" }],
    });
    expect(next.stopReason).toBe("end_turn");
  }, 60_000);

  it("bad input: an unknown session is -32002 (load and prompt), a prompt without text or with an image is -32602", async () => {
    const agent = acp.connection.agent;
    await expect(agent.request("session/load", { sessionId: "no-such-thread", cwd: dir, mcpServers: [] })).rejects.toMatchObject({
      code: -32002,
      data: { sessionId: "no-such-thread" },
    });
    await expect(
      agent.request("session/prompt", { sessionId: "no-such-thread", prompt: [{ type: "text", text: "hi" }] }),
    ).rejects.toMatchObject({
      code: -32002,
    });
    await expect(agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "   " }] })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("no text"),
    });
    await expect(
      agent.request("session/prompt", { sessionId, prompt: [{ type: "image", data: "AAAA", mimeType: "image/png" }] }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it("an embedded text resource reaches the run as context after the prompt's text", async () => {
    const { sessionId: withFile } = await acp.connection.agent.request("session/new", { cwd: dir, mcpServers: [] });
    await acp.connection.agent.request("session/prompt", {
      sessionId: withFile,
      prompt: [
        { type: "text", text: "summarize" },
        { type: "resource", resource: { uri: "file:///home/dev/project/notes.md", text: "EMBEDDED-NOTES", mimeType: "text/markdown" } },
      ],
    });
    const text = updatesOf(acp, withFile)
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => (u.content.type === "text" ? u.content.text : ""))
      .join("");
    expect(text).toContain("You said: summarize");
    expect(text).toContain("EMBEDDED-NOTES");
    expect(text).toContain("file:///home/dev/project/notes.md");
  });

  it("session/load in a new process replays the thread's history, then takes prompts; stdout carried only JSON-RPC", async () => {
    const second = startAcp(dir);
    try {
      await initialize(second);
      const loaded = await second.connection.agent.request("session/load", { sessionId, cwd: "/home/dev/other", mcpServers: [] });
      expect(loaded).toBeDefined();
      const replay = updatesOf(second, sessionId);
      const kinds = replay.map((u) => u.sessionUpdate);
      expect(kinds).toEqual([
        "user_message_chunk",
        "agent_message_chunk",
        "user_message_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
      ]);
      const texts = replay.map((u) => ("content" in u && !Array.isArray(u.content) && u.content?.type === "text" ? u.content.text : ""));
      expect(texts[0]).toBe("hello there");
      expect(texts[1]).toBe("You said: hello there");
      expect(texts[2]).toBe("please look up antler");
      expect(replay[4]).toMatchObject({ status: "completed" });
      expect(texts[5]).toBe("The word means: a test word.");

      const response = await second.connection.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "hello again" }],
      });
      expect(response.stopReason).toBe("end_turn");
      // A session neither created nor loaded on this connection is unknown here.
      const { sessionId: other } = await acp.connection.agent.request("session/new", { cwd: dir, mcpServers: [] });
      await expect(
        second.connection.agent.request("session/prompt", { sessionId: other, prompt: [{ type: "text", text: "hi" }] }),
      ).rejects.toMatchObject({ code: -32002 });

      // Logs went to stderr; every stdout line is a JSON-RPC message.
      const lines = second.stdout
        .join("")
        .split("\n")
        .filter((l) => l !== "");
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
      expect(second.stderr.text).toContain("ACP agent serving on stdio");

      // SIGTERM: the process stops cleanly.
      second.child.kill("SIGTERM");
      const code = await second.exited;
      expect(code, second.stderr.text.slice(-3000)).toBe(0);
    } finally {
      await stopAcp(second);
    }
  }, 90_000);

  it("with a client that offers fs, the agent reads and writes the project through it; never outside the session's cwd", async () => {
    // The first process's client offered no fs: its runs never had the editor tools.
    const toolNames = model.requests.flatMap((r) =>
      ((r.body as { tools?: Array<{ function?: { name?: string } }> } | undefined)?.tools ?? []).map((t) => t.function?.name),
    );
    expect(toolNames).toContain("lookup");
    expect(toolNames).not.toContain("read_editor_file");

    const project = mkdtempSync(join(tmpdir(), "antler-acp-project-"));
    writeFileSync(join(project, "notes.md"), "UNSAVED-EDITOR-NOTES");
    const editor = startAcp(dir, [], project);
    try {
      await initialize(editor, true);
      const { sessionId: s } = await editor.connection.agent.request("session/new", { cwd: project, mcpServers: [] });
      const say = async (text: string) => {
        const before = editor.updates.length;
        await editor.connection.agent.request("session/prompt", { sessionId: s, prompt: [{ type: "text", text }] });
        return editor.updates
          .slice(before)
          .map((n) => n.update)
          .filter((u) => u.sessionUpdate === "agent_message_chunk")
          .map((u) => (u.content.type === "text" ? u.content.text : ""))
          .join("");
      };
      expect(await say("please read the notes")).toContain("UNSAVED-EDITOR-NOTES");
      expect(await say("please write the greeting")).toContain("Wrote");
      expect(readFileSync(join(project, "src/hello.txt"), "utf8")).toBe("hi from antler");
      const outside = await say("please read outside");
      expect(outside).toContain("outside the session's folder");
      const calls = updatesOf(editor, s).filter((u) => u.sessionUpdate === "tool_call");
      expect(calls.map((c) => (c as { kind?: string }).kind)).toEqual(["read", "edit", "read"]);
    } finally {
      await stopAcp(editor);
      rmSync(project, { recursive: true, force: true });
    }
  }, 90_000);

  it("closing stdin ends the process with exit code 0", async () => {
    acp.child.stdin?.end();
    expect(await acp.exited).toBe(0);
  }, 30_000);
});

describe.skipIf(!built)("one Antler distribution calling another over ACP (invoke_acp_agent → `antler acp`)", () => {
  let model: OpenAICompatibleServer;
  let inner: string;
  let outerCwd: string;

  beforeAll(async () => {
    model = await startModel();
    inner = writeDistribution(model);
    outerCwd = mkdtempSync(join(tmpdir(), "antler-acp-outer-"));
  });

  afterAll(async () => {
    await model?.close();
    for (const d of [inner, outerCwd]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it("the outer agent's tool gets the inner Antler's answer, and both runs share one trace id", async () => {
    const outer = await AntlerClient.create({
      config: {
        models: [{ name: "m", provider: "scripted" }],
        storage: { backend: "memory" },
        title: { enabled: false },
        logging: { level: "warn" },
      },
      plugins: [
        scriptedModelsPlugin({
          m: [
            {
              id: "ai-1",
              toolCalls: [{ name: "invoke_acp_agent", args: { agent: "antler", prompt: "hello from the outer agent" }, id: "call-acp" }],
            },
            { id: "ai-2", text: "done" },
          ],
        }),
        {
          plugin: acpPlugin,
          config: {
            acp_agents: {
              antler: {
                command: process.execPath,
                args: [bin, "acp", "--config", join(inner, "config.yaml")],
                env: { ANTLER_CONFIG: "" },
                description: "Another Antler distribution.",
                timeout_seconds: 120,
              },
            },
          },
        },
      ],
      cwd: outerCwd,
      env: {},
      discover: false,
      userId: "u1",
    });
    const events: StreamEvent[] = [];
    try {
      for await (const e of outer.stream("go", { threadId: "t-outer" })) events.push(e);
    } finally {
      await outer.close();
    }
    const tool = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "tool" ? [e.data] : []))[0] as
      | { content: string; status?: string }
      | undefined;
    expect(tool?.status).not.toBe("error");
    expect(tool?.content).toContain('ACP agent "antler" answered');
    expect(tool?.content).toContain("You said: hello from the outer agent");
    const end = events.at(-1);
    const traceId = end?.type === "end" ? end.data.trace_id : undefined;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    // The inner distribution recorded a thread (with the outer tool's workspace as cwd) and a run on the same trace.
    const store = await readStore(inner);
    try {
      const [thread] = await store.listThreads({ userId: "default" });
      expect(String(thread?.metadata.acp_cwd)).toMatch(/acp-workspace$/);
      const runs = await store.listRuns(String(thread?.thread_id), { userId: "default" });
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ status: "success", trace_id: traceId });
    } finally {
      await store.close();
    }
  }, 120_000);
});

describe.skipIf(!built)("`antler acp` asks the editor with session/request_permission when a run pauses for approval", () => {
  let model: OpenAICompatibleServer;
  let dir: string;
  let acp: AcpProcess;
  /** Every permission request the editor got, in order. */
  const asked: RequestPermissionRequest[] = [];
  /** How the editor answers the next requests (each test sets it). */
  let answer: (request: RequestPermissionRequest, signal: AbortSignal) => Promise<RequestPermissionResponse>;
  const ranLog = () => (existsSync(join(dir, "ran.log")) ? readFileSync(join(dir, "ran.log"), "utf8").split("\n").filter(Boolean) : []);
  const select = (optionId: string) => async (): Promise<RequestPermissionResponse> => ({ outcome: { outcome: "selected", optionId } });

  beforeAll(async () => {
    model = await startModel();
    dir = writeDistribution(model, [
      "  - path: ./counted-tool.mjs",
      `  - path: ${JSON.stringify(dists.guardrails)}`,
      "approval:",
      "  rules:",
      "    - name: counted",
      "      tools: [counted_lookup]",
      "      reason: Counted lookups need a yes",
    ]);
    // A tool that leaves a line in ran.log each time it really runs.
    writeFileSync(
      join(dir, "counted-tool.mjs"),
      [
        'import { appendFileSync } from "node:fs";',
        "export default ({ definePlugin, defineTool, z }) => definePlugin({",
        '  name: "counted-tool", version: "1.0.0", kernel: "^0.1.0",',
        "  setup(ctx) {",
        "    ctx.tools.add(defineTool({",
        '      name: "counted_lookup", description: "Looks a word up (counted).", schema: z.object({ word: z.string() }),',
        `      run: ({ word }) => { appendFileSync(${JSON.stringify(join(dir, "ran.log"))}, word + "\\n"); return "meaning of " + word + ": a counted word"; },`,
        "    }));",
        "  },",
        "});",
        "",
      ].join("\n"),
    );
    acp = startAcp(dir, [], undefined, (params, signal) => {
      asked.push(params);
      return answer(params, signal);
    });
    await initialize(acp);
  }, 90_000);

  afterAll(async () => {
    await stopAcp(acp);
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const newSession = async () => (await acp.connection.agent.request("session/new", { cwd: dir, mcpServers: [] })).sessionId;
  const toolUpdates = (sessionId: string) =>
    updatesOf(acp, sessionId).filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");
  const answerText = (sessionId: string) =>
    updatesOf(acp, sessionId)
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => (u.content.type === "text" ? u.content.text : ""))
      .join("");
  const runsOf = async (sessionId: string) => {
    const store = await readStore(dir);
    try {
      return await store.listRuns(sessionId, { userId: "default" });
    } finally {
      await store.close();
    }
  };

  it("allow once: the editor is asked with the call's id, title, kind and input; the same run resumes, the tool runs once and the answer streams", async () => {
    const sessionId = await newSession();
    answer = select("allow_once");
    const before = { asked: asked.length, ran: ranLog().length };
    const response = await acp.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "guarded allow" }] });
    expect(response.stopReason).toBe("end_turn");
    const requests = asked.slice(before.asked);
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request).toMatchObject({
      sessionId,
      toolCall: { title: "counted_lookup", kind: "other", status: "pending", rawInput: { word: "guarded" } },
      _meta: { "antler/rule": "counted", "antler/reason": "Counted lookups need a yes" },
    });
    expect(request?.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once"]);
    const updates = toolUpdates(sessionId);
    const id = request?.toolCall.toolCallId;
    expect(updates.map((u) => [u.toolCallId, u.status])).toEqual([
      [id, "pending"],
      [id, "in_progress"],
      [id, "completed"],
    ]);
    expect(ranLog().length - before.ran).toBe(1);
    expect(answerText(sessionId)).toBe("Tool said: meaning of guarded: a counted word");
    const runs = await runsOf(sessionId);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ run_id: response._meta?.["antler/run_id"], status: "success" });
    // One trace: the request names the run and its trace id, and so does the log line of the answer.
    const traceId = String(response._meta?.["antler/trace_id"]);
    expect(request?._meta).toMatchObject({ "antler/run_id": response._meta?.["antler/run_id"], "antler/trace_id": traceId });
    const logLine = acp.stderr.text.split("\n").find((line) => line.includes("ACP permission answered") && line.includes(traceId));
    expect(logLine).toBeDefined();
  }, 90_000);

  it("reject: the call goes failed, the tool never runs and the model reads the editor's refusal", async () => {
    const sessionId = await newSession();
    answer = select("reject_once");
    const before = { asked: asked.length, ran: ranLog().length };
    const response = await acp.connection.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "guarded reject" }],
    });
    expect(response.stopReason).toBe("end_turn");
    expect(asked.length - before.asked).toBe(1);
    expect(ranLog().length).toBe(before.ran);
    const statuses = toolUpdates(sessionId).map((u) => u.status);
    expect(statuses[0]).toBe("pending");
    expect(statuses.slice(1)).not.toContain("in_progress");
    expect(statuses.at(-1)).toBe("failed");
    expect(answerText(sessionId)).toContain("rejected in the editor");
    expect(answerText(sessionId)).not.toContain("a counted word");
  }, 90_000);

  it("a client that answers the permission request with an error: the call is rejected with that reason", async () => {
    const sessionId = await newSession();
    answer = async () => {
      throw new Error("no permission UI here");
    };
    const before = { ran: ranLog().length };
    const response = await acp.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "guarded error" }] });
    expect(response.stopReason).toBe("end_turn");
    expect(ranLog().length).toBe(before.ran);
    expect(answerText(sessionId)).toContain("the editor could not be asked");
  }, 90_000);

  it("session/cancel while the permission request is open: the turn ends cancelled, the run is cancelled and the tool never runs", async () => {
    const sessionId = await newSession();
    let cancelledRequest = false;
    answer = (_request, signal) =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => {
          cancelledRequest = true;
          resolve({ outcome: { outcome: "cancelled" } });
        });
      });
    const before = { asked: asked.length, ran: ranLog().length };
    const prompt = acp.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "guarded cancel" }] });
    await vi.waitFor(() => expect(asked.length).toBe(before.asked + 1), { timeout: 60_000, interval: 50 });
    await acp.connection.agent.notify("session/cancel", { sessionId });
    const response = await prompt;
    expect(response.stopReason).toBe("cancelled");
    await vi.waitFor(() => expect(cancelledRequest).toBe(true), { timeout: 10_000, interval: 50 });
    const runs = await runsOf(sessionId);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ run_id: response._meta?.["antler/run_id"], status: "cancelled" });
    expect(ranLog().length).toBe(before.ran);
    // The session takes the next prompt.
    answer = select("allow_once");
    const next = await acp.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello again" }] });
    expect(next.stopReason).toBe("end_turn");
  }, 90_000);

  it("two calls in one paused turn: one request each, in order; the allowed one runs, the rejected one does not", async () => {
    const sessionId = await newSession();
    answer = async (request) => ({
      outcome: {
        outcome: "selected",
        optionId: (request.toolCall.rawInput as { word?: string } | undefined)?.word === "first" ? "allow_once" : "reject_once",
      },
    });
    const before = { asked: asked.length, ran: ranLog() };
    const response = await acp.connection.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "guarded pair" }],
    });
    expect(response.stopReason).toBe("end_turn");
    const requests = asked.slice(before.asked);
    expect(requests.map((r) => r.toolCall.rawInput)).toEqual([{ word: "first" }, { word: "second" }]);
    expect(ranLog().slice(before.ran.length)).toEqual(["first"]);
    const [first, second] = requests.map((r) => r.toolCall.toolCallId);
    const last = (id: string | undefined) =>
      toolUpdates(sessionId)
        .filter((u) => u.toolCallId === id)
        .at(-1)?.status;
    expect([last(first), last(second)]).toEqual(["completed", "failed"]);
    // The model reads both results: the first call's output and the refusal of the second.
    expect(answerText(sessionId)).toContain("meaning of first: a counted word");
    expect(answerText(sessionId)).toContain("rejected in the editor");
    expect(answerText(sessionId)).not.toContain("meaning of second");
    expect((await runsOf(sessionId)).map((r) => r.status)).toEqual(["success"]);
  }, 90_000);

  it("allow always: a second call of the same tool in the session is approved without asking; a new session asks again", async () => {
    const sessionId = await newSession();
    answer = select("allow_always");
    const before = { asked: asked.length, ran: ranLog().length };
    const first = await acp.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "guarded always" }] });
    expect(first.stopReason).toBe("end_turn");
    expect(asked.length - before.asked).toBe(1);
    answer = select("reject_once");
    const second = await acp.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "guarded again" }] });
    expect(second.stopReason).toBe("end_turn");
    expect(asked.length - before.asked).toBe(1);
    expect(ranLog().length - before.ran).toBe(2);
    const statuses = toolUpdates(sessionId).map((u) => u.status);
    expect(statuses).toEqual(["pending", "in_progress", "completed", "pending", "in_progress", "completed"]);
    const other = await newSession();
    await acp.connection.agent.request("session/prompt", { sessionId: other, prompt: [{ type: "text", text: "guarded elsewhere" }] });
    expect(asked.length - before.asked).toBe(2);
    expect(ranLog().length - before.ran).toBe(2);
  }, 90_000);
});
