// Approval pauses through the front-end protocols under a real `antler serve` (the compiled CLI in a child process,
// SQLite, an OpenAI-compatible model on loopback, a shell tool behind an approval rule), each driven by its official
// client: AG-UI's HttpAgent sees RUN_FINISHED with the interrupt outcome and resumes with RunAgentInput.resume; the
// AI SDK's chat (AbstractChat, what useChat runs) sees the tool part approval-requested and answers with
// addToolApprovalResponse, which sends the chat again (sendAutomaticallyWhen). Either way the same run continues.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type BaseEvent, buildResumeArray, HttpAgent } from "@ag-ui/client";
import {
  type AntlerServe,
  antlerCliBuilt,
  loopbackModelConfig,
  type OpenAICompatibleServer,
  startAntlerServe,
  startOpenAICompatibleServer,
} from "@antler/kernel/testing";
import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const dists = {
  protocols: resolve(here, "../dist/index.js"),
  gateway: resolve(here, "../../gateway/dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
  guardrails: resolve(here, "../../guardrails/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && antlerCliBuilt();
const ALICE_KEY = "alice-key-0123456789abcdef";
const auth = { authorization: `Bearer ${ALICE_KEY}` };

/** The chat state useChat keeps in React, as plain fields: what AbstractChat reads and writes. */
class PlainChatState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** `useChat`'s chat without React: the SDK's own AbstractChat over plain state. */
class PlainChat extends AbstractChat<UIMessage> {
  constructor(init: Omit<ChatInit<UIMessage>, "messages">) {
    super({ ...init, state: new PlainChatState() });
  }
  get current(): UIMessage[] {
    return this.state.messages;
  }
}

async function settled(chat: PlainChat, until: (messages: UIMessage[]) => boolean): Promise<void> {
  // Bounded wait for the automatic send that addToolApprovalResponse starts (not a timing assertion).
  for (let i = 0; i < 600 && !(chat.status === "ready" && until(chat.current)); i++) await new Promise((r) => setTimeout(r, 50));
  if (chat.error) throw chat.error;
}

type ToolPart = { type: string; state: string; toolCallId: string; approval?: { id: string }; output?: unknown; errorText?: string };
const toolParts = (m: UIMessage | undefined) => (m?.parts ?? []).filter((p) => p.type === "tool-bash") as unknown as ToolPart[];
const texts = (m: UIMessage | undefined) => (m?.parts ?? []).flatMap((p) => (p.type === "text" ? [p.text] : []));

describe.skipIf(!built)("approval pauses through AG-UI and the AI SDK under `antler serve` (needs a build first)", () => {
  let dir: string;
  let marker: string;
  let model: OpenAICompatibleServer;
  let serve: AntlerServe;
  const ran = () => (existsSync(marker) ? readFileSync(marker, "utf8").trim().split("\n") : []);
  const runsOf = async (threadId: string) => {
    const res = await fetch(`${serve.url}/api/threads/${threadId}/runs`, { headers: auth });
    return ((await res.json()) as { runs: Array<{ run_id: string; status: string }> }).runs;
  };

  beforeAll(async () => {
    model = await startOpenAICompatibleServer({
      handler: (body) => {
        const last = body.messages.at(-1);
        if (last?.role === "tool")
          return { text: `tool said: ${typeof last.content === "string" ? last.content : JSON.stringify(last.content)}` };
        return { toolCalls: [{ name: "bash", args: { command: "make deploy" } }] };
      },
    });
    dir = mkdtempSync(join(tmpdir(), "antler-protocols-approval-"));
    marker = join(dir, "bash-ran");
    writeFileSync(
      join(dir, "shell-tool.mjs"),
      [
        'import { appendFileSync } from "node:fs";',
        "export default ({ definePlugin, defineTool, z }) => definePlugin({",
        '  name: "test-shell", version: "1.0.0", kernel: "^0.1.0",',
        "  setup(ctx) {",
        "    ctx.tools.add(defineTool({",
        '      name: "bash", description: "Runs a command.", schema: z.object({ command: z.string() }),',
        `      run: ({ command }) => { appendFileSync(${JSON.stringify(marker)}, command + "\\n"); return "ran " + command; },`,
        '    }), { group: "bash" });',
        "  },",
        "});",
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "config.yaml"),
      [
        ...loopbackModelConfig(model.url),
        "approval:",
        "  rules:",
        "    - { name: shell, tools: [bash], reason: Shell commands change the machine. }",
        "plugins:",
        `  - path: ${JSON.stringify(dists.openai)}`,
        "  - path: ./shell-tool.mjs",
        `  - path: ${JSON.stringify(dists.guardrails)}`,
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
  }, 90_000);

  afterAll(async () => {
    await serve?.stop();
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("AG-UI: RUN_FINISHED has the interrupt outcome naming the call; resume approving it continues the same run to success", async () => {
    const before = ran().length;
    const threadId = `approval-ag-ui-${Date.now()}`;
    const agent = new HttpAgent({ url: `${serve.url}/ag-ui`, threadId, headers: auth });
    agent.addMessage({ id: "u1", role: "user", content: "deploy please" });
    const finished: Array<{ outcome: string; interrupts?: unknown[] }> = [];
    const first: BaseEvent[] = [];
    await agent.runAgent(
      {},
      {
        onEvent: ({ event }) => void first.push(event),
        onRunFinishedEvent: (params) => {
          finished.push({ outcome: params.outcome, ...("interrupts" in params ? { interrupts: params.interrupts } : {}) });
        },
      },
    );
    expect(finished).toEqual([
      {
        outcome: "interrupt",
        interrupts: [
          expect.objectContaining({
            reason: "tool_approval",
            toolCallId: expect.any(String),
            metadata: expect.objectContaining({ tool: "bash", args: { command: "make deploy" }, rule: "shell" }),
          }),
        ],
      },
    ]);
    expect(agent.pendingInterrupts).toHaveLength(1);
    const [interrupt] = agent.pendingInterrupts;
    expect(interrupt?.id).toBe(interrupt?.toolCallId);
    expect(ran().length).toBe(before);
    const [paused] = await runsOf(threadId);
    expect(paused?.status).toBe("paused");

    const second: BaseEvent[] = [];
    await agent.runAgent(
      { resume: buildResumeArray(agent.pendingInterrupts, { [interrupt?.id ?? ""]: { status: "resolved", payload: { approved: true } } }) },
      { onEvent: ({ event }) => void second.push(event) },
    );
    const end = second.at(-1) as BaseEvent & { outcome?: { type: string } };
    expect(end.type).toBe("RUN_FINISHED");
    expect(end.outcome?.type).toBe("success");
    expect(second.map((e) => e.type)).toContain("TOOL_CALL_RESULT");
    expect(agent.pendingInterrupts).toEqual([]);
    expect(agent.messages.at(-1)).toMatchObject({ role: "assistant", content: "tool said: ran make deploy" });
    expect(ran().slice(before)).toEqual(["make deploy"]);
    // The same run went on: one run on the thread, ended success.
    expect(await runsOf(threadId)).toEqual([expect.objectContaining({ run_id: paused?.run_id, status: "success" })]);
  });

  it("AG-UI: a rejecting resume reaches the model with its reason; a resume with no approved flag is a 400 and the run stays paused; a resume on an idle thread is a 409", async () => {
    const before = ran().length;
    const threadId = `approval-ag-ui-reject-${Date.now()}`;
    const agent = new HttpAgent({ url: `${serve.url}/ag-ui`, threadId, headers: auth });
    agent.addMessage({ id: "u1", role: "user", content: "deploy please" });
    await agent.runAgent();
    const [interrupt] = agent.pendingInterrupts;
    const bad = await fetch(`${serve.url}/ag-ui`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        threadId,
        runId: crypto.randomUUID(),
        messages: agent.messages,
        resume: [{ interruptId: interrupt?.id, status: "resolved", payload: { yes: 1 } }],
      }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string; where: string } }).error).toMatchObject({
      code: "ANTLER_ERR_AG_UI_INVALID_INPUT",
      where: "resume[0].payload",
    });
    expect((await runsOf(threadId))[0]?.status).toBe("paused");

    await agent.runAgent({
      resume: buildResumeArray(agent.pendingInterrupts, {
        [interrupt?.id ?? ""]: { status: "resolved", payload: { approved: false, reason: "not on a Friday" } },
      }),
    });
    const answer = String(agent.messages.at(-1)?.content ?? "");
    expect(answer).toContain("tool said:");
    expect(answer).toContain("not on a Friday");
    expect(ran().length).toBe(before);

    const idle = await fetch(`${serve.url}/ag-ui`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        threadId,
        runId: crypto.randomUUID(),
        messages: agent.messages,
        resume: [{ interruptId: interrupt?.id, status: "resolved", payload: { approved: true } }],
      }),
    });
    expect(idle.status).toBe(409);
    expect(((await idle.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_RUN_NOT_PAUSED");
  });

  it("AI SDK: the tool part is approval-requested; addToolApprovalResponse sends the chat again and the same run runs the call", async () => {
    const before = ran().length;
    const chatId = `approval-ai-sdk-${Date.now()}`;
    const chat = new PlainChat({
      id: chatId,
      transport: new DefaultChatTransport<UIMessage>({ api: `${serve.url}/ai-sdk/chat`, headers: auth }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await chat.sendMessage({ text: "deploy please" });
    const assistant = chat.current.at(-1);
    const [part] = toolParts(assistant);
    expect(part).toMatchObject({ state: "approval-requested", input: { command: "make deploy" } });
    expect(ran().length).toBe(before);
    const [paused] = await runsOf(chatId);
    expect(paused?.status).toBe("paused");

    await chat.addToolApprovalResponse({ id: part?.approval?.id ?? "", approved: true });
    await settled(chat, (messages) => toolParts(messages.at(-1))[0]?.state === "output-available");
    const continued = chat.current.at(-1);
    // One assistant message: the resumed run continued it.
    expect(chat.current.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(toolParts(continued)[0]).toMatchObject({ state: "output-available", output: "ran make deploy" });
    expect(texts(continued)).toContain("tool said: ran make deploy");
    expect(ran().slice(before)).toEqual(["make deploy"]);
    expect(await runsOf(chatId)).toEqual([expect.objectContaining({ run_id: paused?.run_id, status: "success" })]);
  });

  it("AI SDK: a denied approval reaches the model with its reason, the part ends output-error with the rejection, and the tool does not run", async () => {
    const before = ran().length;
    const chat = new PlainChat({
      id: `approval-ai-sdk-deny-${Date.now()}`,
      transport: new DefaultChatTransport<UIMessage>({ api: `${serve.url}/ai-sdk/chat`, headers: auth }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await chat.sendMessage({ text: "deploy please" });
    const [part] = toolParts(chat.current.at(-1));
    await chat.addToolApprovalResponse({ id: part?.approval?.id ?? "", approved: false, reason: "not on a Friday" });
    await settled(chat, (messages) => texts(messages.at(-1)).some((t) => t.startsWith("tool said:")));
    const answer = texts(chat.current.at(-1)).join("\n");
    expect(answer).toContain("not on a Friday");
    // The rejection is the call's result: the part ends output-error with it.
    const [denied] = toolParts(chat.current.at(-1));
    expect(denied?.state).toBe("output-error");
    expect(denied?.errorText).toContain("a person rejected this call: not on a Friday");
    expect(ran().length).toBe(before);
  });
});
