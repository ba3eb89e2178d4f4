// The A2A client (`a2a_agents:` and `invoke_a2a_agent`) against a real remote: a second Antler distribution serving
// A2A on a loopback gateway (scripted models on both sides), reached through a recording loopback proxy so the test
// sees the headers that went over the wire.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import guardrailsPlugin from "@antler/plugin-guardrails";
import { AntlerClient, type StreamEvent } from "@antler/plugin-runtime";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import a2a, { A2A_EVENT, INVOKE_A2A_AGENT_TOOL } from "../src/index.js";

const REMOTE_KEY = "remote-key-0123456789abcdef";
const KEY_ENV = "ANTLER_TEST_A2A_DESK_KEY";

function lastHuman(messages: BaseMessage[]): string {
  const human = messages.filter((m) => m.getType() === "human").at(-1);
  return typeof human?.content === "string" ? human.content : "";
}

/** The remote's deploy tool, behind an approval rule: what it ran. */
const deployed: string[] = [];
const deployTool = definePlugin({
  name: "deploy-tool",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(
      defineTool({
        name: "deploy",
        description: "Deploys a target.",
        schema: z.object({ target: z.string() }),
        run: (args: { target: string }) => {
          deployed.push(args.target);
          return `deployed ${args.target}`;
        },
      }),
    );
  },
});

/** The remote agent: a question for "ask me", a deploy (needing approval) for "deploy", a long wait for "sleep long", an echo otherwise. */
const remoteScript = (messages: BaseMessage[]) => {
  const last = messages[messages.length - 1];
  if (last instanceof ToolMessage && last.name === "deploy") return { text: `Deploy result: ${String(last.content)}` };
  if (last instanceof ToolMessage) return { text: "Done with the tool." };
  if (last instanceof AIMessage) return { text: "?" };
  const text = lastHuman(messages);
  if (text.includes("ask me")) {
    return {
      toolCalls: [{ id: "call-ask", name: "ask_clarification", args: { question: "Which colour?", clarification_type: "missing_info" } }],
    };
  }
  if (text.includes("sleep long")) return { text: "too late", delayMs: 60_000 };
  if (text.includes("deploy")) return { toolCalls: [{ id: `call-deploy-${messages.length}`, name: "deploy", args: { target: "prod" } }] };
  return { text: `You said: ${text}` };
};

/**
 * The local lead: "call <agent>: <message>" calls invoke_a2a_agent; a remote question goes to the user with
 * ask_clarification (as the tool result says to); any other tool result is echoed as the answer.
 */
const localScript = (messages: BaseMessage[]) => {
  const last = messages[messages.length - 1];
  if (last instanceof ToolMessage && last.name === INVOKE_A2A_AGENT_TOOL && last.additional_kwargs.a2a_approval !== undefined) {
    // A remote approval pause: the person decides, as the tool result says.
    return {
      toolCalls: [
        {
          id: `ask-${crypto.randomUUID()}`,
          name: "ask_clarification",
          args: { question: String(last.content), clarification_type: "approach_choice" },
        },
      ],
    };
  }
  if (last instanceof ToolMessage && last.name === INVOKE_A2A_AGENT_TOOL && typeof last.additional_kwargs.a2a_question === "string") {
    const question = last.additional_kwargs.a2a_question;
    return {
      toolCalls: [{ id: `ask-${crypto.randomUUID()}`, name: "ask_clarification", args: { question, clarification_type: "missing_info" } }],
    };
  }
  if (last instanceof ToolMessage) return { text: `Remote said: ${String(last.content)}` };
  const match = /^call ([\w-]+)(?:\[(\w+)\])?: (.*)$/s.exec(lastHuman(messages));
  if (!match) return { text: "nothing to do" };
  const args = { agent: match[1], message: match[3], ...(match[2] ? { skill: match[2] } : {}) };
  return { toolCalls: [{ id: `call-${crypto.randomUUID()}`, name: INVOKE_A2A_AGENT_TOOL, args }] };
};

interface RecordingProxy {
  url: string;
  requests: Array<{ method: string; path: string; headers: Record<string, string | string[] | undefined> }>;
  close(): Promise<void>;
}

/** Forwards to `target` as it is (the Host header too, so the card names the proxy) and records every request. */
async function startProxy(target: string): Promise<RecordingProxy> {
  const requests: RecordingProxy["requests"] = [];
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? "", path: req.url ?? "", headers: { ...req.headers } });
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", () => res.destroy());
    req.pipe(forward);
    res.on("close", () => forward.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let dirs: string[] = [];
let remote: AntlerClient;
let gateway: RunningGateway;
let proxy: RecordingProxy;
let local: AntlerClient;

beforeAll(async () => {
  process.env[KEY_ENV] = REMOTE_KEY;
  const remoteDir = mkdtempSync(join(tmpdir(), "antler-a2a-remote-"));
  const localDir = mkdtempSync(join(tmpdir(), "antler-a2a-local-"));
  dirs = [remoteDir, localDir];
  remote = await AntlerClient.create({
    config: {
      base_dir: remoteDir,
      models: [{ name: "m", provider: "scripted" }],
      approval: { rules: [{ name: "deploys", tools: ["deploy"] }] },
      storage: { backend: "sqlite" },
      title: { enabled: false },
      logging: { level: "warn" },
    },
    plugins: [scriptedModelsPlugin({ m: { respond: remoteScript } }), deployTool, guardrailsPlugin, a2a],
    cwd: remoteDir,
    env: {},
    discover: false,
  });
  gateway = await startGateway({
    client: remote,
    config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: REMOTE_KEY, user: "peer" }] } },
    shutdownGraceMs: 500,
  });
  proxy = await startProxy(gateway.url);
  local = await AntlerClient.create({
    config: {
      base_dir: localDir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      logging: { level: "warn" },
      a2a_agents: [
        { name: "desk", card_url: proxy.url, auth: { value_env: KEY_ENV }, allow_private_addresses: true, timeout_seconds: 60 },
        { name: "guarded", card_url: `${gateway.url}/.well-known/agent-card.json`, auth: { value_env: KEY_ENV } },
        { name: "gone", card_url: `http://127.0.0.1:${await closedPort()}`, allow_private_addresses: true },
        { name: "slow", card_url: proxy.url, auth: { value_env: KEY_ENV }, allow_private_addresses: true, timeout_seconds: 2 },
      ],
    },
    plugins: [scriptedModelsPlugin({ m: { respond: localScript } }), a2a],
    cwd: localDir,
    env: {},
    discover: false,
  });
}, 60_000);

afterAll(async () => {
  await local?.close();
  await gateway?.close();
  await proxy?.close();
  await remote?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  delete process.env[KEY_ENV];
});

async function run(text: string, options: { threadId?: string; traceId?: string } = {}) {
  const events: StreamEvent[] = [];
  for await (const event of local.stream(text, options)) events.push(event);
  const custom = events.filter((e) => e.type === "custom").map((e) => e.data as Record<string, unknown>);
  const tool = events
    .filter((e) => e.type === "messages-tuple" && e.data.type === "tool")
    .map((e) => e.data as { content: string; name?: string })
    .find((m) => m.name === INVOKE_A2A_AGENT_TOOL);
  const end = events.find((e) => e.type === "end");
  return { events, custom, tool: tool?.content ?? "", end: end?.type === "end" ? end.data : undefined };
}

async function remoteSdkClient() {
  const keyed: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${REMOTE_KEY}`);
    return fetch(input, { ...init, headers });
  };
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: keyed })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
    }),
  ).createFromUrl(gateway.url);
}

describe("invoke_a2a_agent: remote A2A agents from a2a_agents", () => {
  it("describes each configured agent with the skills its card lists, and an unreadable card with the reason", async () => {
    const tools = await local.kernel.getAvailableTools();
    const tool = tools.find((t) => t.name === INVOKE_A2A_AGENT_TOOL);
    expect(tool?.description).toContain("- desk: An Antler agent.");
    expect(tool?.description).toContain("skill lead (Lead agent)");
    expect(tool?.description).toMatch(/- guarded: .*card could not be read: .*loopback/);
    expect(tool?.description).toMatch(/- gone: .*card could not be read/);
  });

  it("streams the remote task as custom events and answers with the remote agent's text, under one trace id on both sides", async () => {
    const traceId = "a2a-client-trace-0001";
    const before = proxy.requests.length;
    const result = await run("call desk: hello over there", { traceId });
    expect(result.tool).toBe("You said: hello over there");
    const types = result.custom.map((c) => c.type);
    expect(types[0]).toBe(A2A_EVENT.started);
    expect(types).toContain(A2A_EVENT.artifact);
    expect(types.at(-1)).toBe(A2A_EVENT.ended);
    expect(result.custom.at(-1)).toMatchObject({ agent: "desk", state: "completed", trace_id: traceId });
    expect(result.end?.trace_id).toBe(traceId);
    const sent = proxy.requests.slice(before).filter((r) => r.method === "POST");
    expect(sent.length).toBeGreaterThan(0);
    for (const r of sent) {
      expect(r.headers["x-trace-id"]).toBe(traceId);
      expect(r.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      expect(r.headers.authorization).toBe(`Bearer ${REMOTE_KEY}`);
    }
    // The remote run is on the same trace.
    const taskId = result.custom[0]?.task_id as string;
    const task = await (await remoteSdkClient()).getTask({ tenant: "", id: taskId });
    expect(task.metadata?.trace_id).toBe(traceId);
  });

  it("surfaces input-required as the remote question, and the follow-up call on the thread answers the same remote task", async () => {
    const first = await run("call desk: please ask me something");
    expect(first.tool).toContain("Which colour?");
    expect(first.tool).toContain("needs more input");
    // The lead asked the user (ask_clarification ends the turn): the remote question is what the user sees last.
    const thread = await local.getThread(first.end?.thread_id as string, { messages: { limit: 5 } });
    expect(thread.messages.at(-1)).toMatchObject({ type: "tool", name: "ask_clarification" });
    expect(thread.messages.at(-1)?.content).toContain("Which colour?");
    const taskId = first.custom.find((c) => c.type === A2A_EVENT.started)?.task_id as string;
    expect(first.custom.at(-1)).toMatchObject({ type: A2A_EVENT.ended, state: "input-required", task_id: taskId });
    const threadId = first.end?.thread_id as string;
    const second = await run("call desk: blue", { threadId });
    expect(second.tool).toBe("You said: blue");
    expect(second.custom.find((c) => c.type === A2A_EVENT.started)?.task_id).toBe(taskId);
    const task = await (await remoteSdkClient()).getTask({ tenant: "", id: taskId });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // A third call starts a new task in the same remote context.
    const third = await run("call desk: and again", { threadId });
    const thirdTask = third.custom.find((c) => c.type === A2A_EVENT.started);
    expect(thirdTask?.task_id).not.toBe(taskId);
    expect(thirdTask?.context_id).toBe(task.contextId);
  });

  it("surfaces a remote approval pause for the user to decide; 'approve' on the next call continues the same remote task and run", async () => {
    deployed.length = 0;
    const first = await run("call desk: please deploy it");
    expect(first.tool).toContain('The remote agent "desk" paused for a person\'s approval');
    expect(first.tool).toContain('deploy {"target":"prod"}');
    expect(first.tool).toContain('"approve", or "reject: <the user\'s reason>"');
    expect(deployed).toEqual([]);
    // The lead asked the user: the pending call is what the user sees last.
    const threadId = first.end?.thread_id as string;
    const thread = await local.getThread(threadId, { messages: { limit: 5 } });
    expect(thread.messages.at(-1)).toMatchObject({ type: "tool", name: "ask_clarification" });
    expect(thread.messages.at(-1)?.content).toContain('deploy {"target":"prod"}');
    const taskId = first.custom.find((c) => c.type === A2A_EVENT.started)?.task_id as string;
    expect(first.custom.at(-1)).toMatchObject({ type: A2A_EVENT.ended, state: "input-required", task_id: taskId });
    const paused = await (await remoteSdkClient()).getTask({ tenant: "", id: taskId });
    const runId = paused.metadata?.antler_run_id;

    const second = await run("call desk: approve", { threadId });
    expect(second.tool).toBe("Deploy result: deployed prod");
    expect(second.custom.find((c) => c.type === A2A_EVENT.started)?.task_id).toBe(taskId);
    expect(deployed).toEqual(["prod"]);
    const done = await (await remoteSdkClient()).getTask({ tenant: "", id: taskId });
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.metadata?.antler_run_id).toBe(runId);
  });

  it("'reject: <reason>' on the next call rejects the remote call: it does not run, and the remote model reads the reason", async () => {
    deployed.length = 0;
    const first = await run("call desk: please deploy it");
    const threadId = first.end?.thread_id as string;
    const second = await run("call desk: reject: the freeze is on", { threadId });
    expect(second.tool).toContain("Deploy result:");
    expect(second.tool).toContain("the freeze is on");
    expect(deployed).toEqual([]);
  });

  it("refuses a loopback card URL unless allow_private_addresses is set, as a tool error the run survives", async () => {
    const result = await run("call guarded: hello");
    expect(result.tool).toContain('refused to call remote agent "guarded"');
    expect(result.tool).toContain("loopback");
    expect(result.tool).toContain("allow_private_addresses: true");
    expect(result.end).toBeDefined();
  });

  it("answers an unreachable agent and a remote protocol error with clear tool errors, and the run ends normally", async () => {
    const gone = await run("call gone: hello");
    expect(gone.tool).toMatch(/^Error: the remote agent "gone" could not complete the call: .*fetch failed/);
    expect(gone.end).toBeDefined();
    const failed = await run("call desk[no_such_skill]: hello");
    expect(failed.tool).toMatch(/^Error: the remote agent "desk" could not complete the call: .*unknown skill "no_such_skill"/);
    expect(failed.end).toBeDefined();
  });

  it("cancels the remote task when the Antler run is cancelled", async () => {
    const abort = new AbortController();
    let taskId = "";
    const stream = local.stream("call desk: sleep long", { signal: abort.signal });
    await expect(
      (async () => {
        for await (const event of stream) {
          if (event.type === "custom" && event.data.type === A2A_EVENT.started) {
            taskId = event.data.task_id as string;
            abort.abort();
          }
        }
      })(),
    ).rejects.toThrow();
    expect(taskId).not.toBe("");
    const client = await remoteSdkClient();
    let state: TaskState | undefined;
    for (let i = 0; i < 300; i++) {
      state = (await client.getTask({ tenant: "", id: taskId })).status?.state;
      if (state === TaskState.TASK_STATE_CANCELED) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it("gives up after timeout_seconds with a tool error and cancels the remote task", async () => {
    const result = await run("call slow: sleep long");
    expect(result.tool).toContain("no answer within 2 s (timeout_seconds)");
    const taskId = result.custom.find((c) => c.type === A2A_EVENT.started)?.task_id as string;
    expect(result.tool).toContain(`The remote task ${taskId} was cancelled`);
    const task = await (await remoteSdkClient()).getTask({ tenant: "", id: taskId });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });
});

describe("a2a_agents: bad config", () => {
  it("refuses two agents of one name, and a card URL that is not http(s), naming the config path", async () => {
    const dir = mkdtempSync(join(tmpdir(), "antler-a2a-badcfg-"));
    try {
      const create = (agents: unknown[]) =>
        AntlerClient.create({
          config: { base_dir: dir, models: [{ name: "m", provider: "scripted" }], a2a_agents: agents },
          plugins: [scriptedModelsPlugin({ m: { respond: localScript } }), a2a],
          cwd: dir,
          env: {},
          discover: false,
        });
      await expect(
        create([
          { name: "desk", card_url: "https://a.example" },
          { name: "desk", card_url: "https://b.example" },
        ]),
      ).rejects.toThrow(/a2a_agents.*"desk" is listed twice/s);
      await expect(create([{ name: "desk", card_url: "file:///etc/passwd" }])).rejects.toThrow(
        /a2a_agents\.0\.card_url|a2a_agents\[0\]\.card_url/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("answers a call whose key variable is unset with a tool error naming the variable", async () => {
    delete process.env[KEY_ENV];
    try {
      const result = await run("call desk: hello");
      expect(result.tool).toContain(`${KEY_ENV} is not set`);
      expect(result.end).toBeDefined();
    } finally {
      process.env[KEY_ENV] = REMOTE_KEY;
    }
  });
});
