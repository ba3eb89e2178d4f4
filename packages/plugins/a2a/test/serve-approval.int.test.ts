// An approval pause over A2A under a real `antler serve` (the compiled CLI in a child process, SQLite storage, an
// OpenAI-compatible model on loopback, a shell tool behind an approval rule), driven by the official @a2a-js/sdk
// client: the paused run is an `input-required` task naming the pending call, and a message on the same task with
// the decision continues the same run.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Message, type Part, Role, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { type Client, ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import {
  type AntlerServe,
  antlerCliBuilt,
  loopbackModelConfig,
  type OpenAICompatibleServer,
  startAntlerServe,
  startOpenAICompatibleServer,
} from "@antler/kernel/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const dists = {
  a2a: resolve(here, "../dist/index.js"),
  gateway: resolve(here, "../../gateway/dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
  guardrails: resolve(here, "../../guardrails/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && antlerCliBuilt();
const ALICE_KEY = "alice-key-0123456789abcdef";

const text = (value: string): Part => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "text/plain" });
const data = (value: unknown): Part => ({
  content: { $case: "data", value },
  metadata: undefined,
  filename: "",
  mediaType: "application/json",
});
const message = (parts: Part[], task?: Task): Message => ({
  messageId: crypto.randomUUID(),
  contextId: task?.contextId ?? "",
  taskId: task?.id ?? "",
  role: Role.ROLE_USER,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const send = (m: Message) => ({ tenant: "", message: m, configuration: undefined, metadata: undefined });

async function streamed(client: Client, m: Message): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of client.sendMessageStream(send(m))) events.push(event);
  return events;
}

function finalStatus(events: StreamResponse[]) {
  const last = events.at(-1)?.payload;
  if (last?.$case !== "statusUpdate") throw new Error(`the stream did not end on a status update: ${JSON.stringify(last)}`);
  return last.value.status;
}

const answerOf = (task: Task) =>
  task.artifacts
    .flatMap((a) => a.parts)
    .map((p) => (p.content?.$case === "text" ? p.content.value : ""))
    .join("");

describe.skipIf(!built)("A2A approval pauses under `antler serve` (compiled CLI in a child process; needs a build first)", () => {
  let dir: string;
  let marker: string;
  let model: OpenAICompatibleServer;
  let serve: AntlerServe;
  let client: Client;

  const ran = () => (existsSync(marker) ? readFileSync(marker, "utf8").trim().split("\n") : []);
  const runsOf = async (threadId: string) => {
    const res = await fetch(`${serve.url}/api/threads/${threadId}/runs`, { headers: { authorization: `Bearer ${ALICE_KEY}` } });
    return ((await res.json()) as { runs: Array<{ run_id: string; status: string }> }).runs;
  };

  /** Starts a task whose run pauses on `bash make deploy`; returns it as `SendMessage` answers. */
  async function pausedTask(): Promise<Task> {
    const task = await client.sendMessage(send(message([text("deploy please")])));
    if (!("id" in task) || !("status" in task)) throw new Error("SendMessage answered a message, not a task");
    return task as Task;
  }

  beforeAll(async () => {
    // It calls bash until it sees the tool's result, then reports that result.
    model = await startOpenAICompatibleServer({
      handler: (body) => {
        const last = body.messages.at(-1);
        if (last?.role === "tool")
          return { text: `tool said: ${typeof last.content === "string" ? last.content : JSON.stringify(last.content)}` };
        return { toolCalls: [{ name: "bash", args: { command: "make deploy" } }] };
      },
    });
    dir = mkdtempSync(join(tmpdir(), "antler-a2a-approval-"));
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
        `  - path: ${JSON.stringify(dists.a2a)}`,
        "",
      ].join("\n"),
    );
    serve = await startAntlerServe({ cwd: dir, env: { ALICE_KEY } });
    const keyed: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${ALICE_KEY}`);
      return fetch(input, { ...init, headers });
    };
    client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl: keyed })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
      }),
    ).createFromUrl(serve.url);
  }, 90_000);

  afterAll(async () => {
    await serve?.stop();
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a run paused for approval is an input-required task naming the call; an approve data part on the same task continues the same run to completed", async () => {
    const before = ran().length;
    const first = message([text("deploy please")]);
    const events = await streamed(client, first);
    const opened = events[0]?.payload;
    if (opened?.$case !== "task") throw new Error("the stream did not start with a task");
    const paused = finalStatus(events);
    expect(paused?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const [textPart, dataPart] = paused?.message?.parts ?? [];
    expect(textPart?.content?.$case === "text" ? textPart.content.value : "").toContain('bash {"command":"make deploy"}');
    expect(dataPart?.content?.$case === "data" ? dataPart.content.value : undefined).toMatchObject({
      kind: "antler.approval",
      calls: [{ tool: "bash", args: { command: "make deploy" }, rule: "shell", reason: "Shell commands change the machine." }],
    });
    expect(ran().length).toBe(before);

    // GetTask (from the run record) says the same, and the run is paused.
    const task = await client.getTask({ tenant: "", id: opened.value.id });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(task.status?.message?.parts[1]?.content).toMatchObject({ $case: "data", value: { kind: "antler.approval" } });
    const [pausedRun] = await runsOf(task.contextId);
    expect(pausedRun?.status).toBe("paused");

    const resumed = await streamed(client, message([data({ decision: "approve" })], task));
    expect(finalStatus(resumed)?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const done = await client.getTask({ tenant: "", id: task.id });
    expect(answerOf(done)).toBe("tool said: ran make deploy");
    expect(done.metadata?.antler_run_id).toBe(pausedRun?.run_id);
    // The same run went on: one run on the thread, ended success; the tool ran once.
    expect(await runsOf(task.contextId)).toEqual([expect.objectContaining({ run_id: pausedRun?.run_id, status: "success" })]);
    expect(ran().slice(before)).toEqual(["make deploy"]);
  });

  it('the text "reject: <reason>" answers the pause: the tool does not run and the model reads the reason', async () => {
    const before = ran().length;
    const task = await pausedTask();
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const answered = (await client.sendMessage(send(message([text("reject: not on a Friday")], task)))) as Task;
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const answer = answerOf(answered);
    expect(answer).toContain("tool said:");
    expect(answer).toContain("not on a Friday");
    expect(ran().length).toBe(before);
  });

  it("a message that is no decision, or a decision the tool's schema refuses, is invalid params and the task stays input-required", async () => {
    const before = ran().length;
    const task = await pausedTask();
    await expect(client.sendMessage(send(message([text("maybe later")], task)))).rejects.toThrow(/"maybe later" is not a decision/);
    await expect(client.sendMessage(send(message([text("maybe later")], task)))).rejects.toBeInstanceOf(RequestMalformedError);
    await expect(client.sendMessage(send(message([data({ note: "no decision here" })], task)))).rejects.toBeInstanceOf(
      RequestMalformedError,
    );
    await expect(client.sendMessage(send(message([data({ decision: "edit", args: { command: 7 } })], task)))).rejects.toThrow(
      /the edited arguments for bash do not fit its schema/,
    );
    expect((await client.getTask({ tenant: "", id: task.id })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect((await runsOf(task.contextId))[0]?.status).toBe("paused");

    // An edit that fits runs the edited call.
    const edited = (await client.sendMessage(
      send(message([data({ decision: "edit", args: { command: "make deploy-staging" } })], task)),
    )) as Task;
    expect(edited.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(ran().slice(before)).toEqual(["make deploy-staging"]);
  });
});
