// The A2A server under a real `antler serve` (the compiled CLI in a child process, SQLite storage, an
// OpenAI-compatible model server on loopback), driven by the official @a2a-js/sdk client.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Role, type StreamResponse, TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { TaskNotFoundError } from "@a2a-js/sdk/errors";
import { type OpenAICompatibleServer, startOpenAICompatibleServer } from "@antler/kernel/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const bin = resolve(here, "../../../kernel/bin/antler.js");
const dists = {
  a2a: resolve(here, "../dist/index.js"),
  gateway: resolve(here, "../../gateway/dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && existsSync(resolve(here, "../../../kernel/dist/bundle/cli.js"));
const ALICE_KEY = "alice-key-0123456789abcdef";
const TRACE_ID = "a2a-serve-trace-0001";

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

describe.skipIf(!built)("A2A under `antler serve` (compiled CLI in a child process; needs a build first)", () => {
  let dir: string;
  let model: OpenAICompatibleServer;
  let child: ChildProcess;
  let url: string;
  const output = { text: "" };

  beforeAll(async () => {
    model = await startOpenAICompatibleServer({
      handler: (body) => {
        const last = body.messages.at(-1);
        const text = typeof last?.content === "string" ? last.content : "";
        return { text: `You said: ${text}` };
      },
    });
    dir = mkdtempSync(join(tmpdir(), "antler-a2a-serve-"));
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
        `  - path: ${JSON.stringify(dists.gateway)}`,
        "    config:",
        "      auth:",
        "        api_keys:",
        "          - { key: $ALICE_KEY, user: alice }",
        `  - path: ${JSON.stringify(dists.a2a)}`,
        "    config:",
        "      server:",
        "        name: Serve test agent",
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

  it("resolves the card, streams a task to completed under the caller's trace id, and reads it back with GetTask", async () => {
    const keyed: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${ALICE_KEY}`);
      headers.set("x-trace-id", TRACE_ID);
      return fetch(input, { ...init, headers });
    };
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl: keyed })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
      }),
    );
    const client = await factory.createFromUrl(url);
    const message = {
      messageId: crypto.randomUUID(),
      contextId: "",
      taskId: "",
      role: Role.ROLE_USER,
      parts: [
        { content: { $case: "text" as const, value: "hello from a peer" }, metadata: undefined, filename: "", mediaType: "text/plain" },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream({ tenant: "", message, configuration: undefined, metadata: undefined }))
      events.push(event);
    const first = events[0]?.payload;
    if (first?.$case !== "task") throw new Error("the stream did not start with a task");
    const last = events.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" ? last.value.status?.state : undefined).toBe(TaskState.TASK_STATE_COMPLETED);
    const task = await client.getTask({ tenant: "", id: first.value.id });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.metadata?.trace_id).toBe(TRACE_ID);
    const answer = task.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === "text" ? p.content.value : ""));
    expect(answer.join("")).toBe("You said: hello from a peer");
    // The run record on the Antler side carries the same trace id.
    const runs = await fetch(`${url}/api/threads/${task.contextId}/runs`, { headers: { authorization: `Bearer ${ALICE_KEY}` } });
    const [run] = ((await runs.json()) as { runs: Array<{ trace_id: string; status: string }> }).runs;
    expect(run).toMatchObject({ trace_id: TRACE_ID, status: "success" });
    await expect(client.getTask({ tenant: "", id: crypto.randomUUID() })).rejects.toBeInstanceOf(TaskNotFoundError);
  });
});
