// The LangGraph runs routes on PostgreSQL with two gateway instances on one database: a run created on instance A
// is joined, live, from instance B with the official SDK (through the gateway's run event log), and an interrupt
// a run on A ended with is resumed from B with command.resume.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeWithPostgres, scriptedModelsPlugin, usePostgresSchema } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, expect, it } from "vitest";
import protocols from "../src/index.js";

const ALICE = "alice-key-0123456789abcdef";

/** "slow" answers after a pause (so a joiner from the other instance finds it running); "ask me" asks a question. */
const script = (messages: BaseMessage[]) => {
  const last = messages[messages.length - 1];
  if (last instanceof ToolMessage || last instanceof AIMessage) return { text: "?" };
  const text = typeof last?.content === "string" ? last.content : "";
  if (text.includes("slow")) return { text: "a slow answer in several words", delayMs: 1500 };
  if (text.includes("ask me")) {
    return {
      toolCalls: [
        {
          id: "call-ask",
          name: "ask_clarification",
          args: { question: "Which colour?", clarification_type: "approach_choice", options: ["red", "blue"] },
        },
      ],
    };
  }
  return { text: `You said: ${text}` };
};

const cleanups: Array<() => Promise<void>> = [];

describeWithPostgres("LangGraph runs across two gateway instances on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_lg_runs" });
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  async function instance(dir: string): Promise<{ gateway: RunningGateway; sdk: Client }> {
    const client = await AntlerClient.create({
      config: {
        base_dir: dir,
        models: [{ name: "m", provider: "scripted" }],
        storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name },
        title: { enabled: false },
        logging: { level: "error" },
      },
      plugins: [scriptedModelsPlugin({ m: { respond: script } }), protocols],
      cwd: dir,
      env: {},
      discover: false,
      runLeases: { heartbeatMs: 200, leaseMs: 5000 },
    });
    const gateway = await startGateway({
      client,
      config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: ALICE, user: "alice" }] } },
      shutdownGraceMs: 1000,
    });
    cleanups.push(async () => {
      await gateway.close();
      await client.close();
    });
    return { gateway, sdk: new Client({ apiUrl: `${gateway.url}/langgraph`, apiKey: ALICE, callerOptions: { maxRetries: 0 } }) };
  }

  function sharedDir(): string {
    const dir = mkdtempSync(join(tmpdir(), "antler-lg-pg-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  const human = (content: string) => ({ messages: [{ type: "human", content }] });
  type Values = { messages: Array<{ type: string; content: string }>; __interrupt__?: Array<{ id: string; value: { question?: string } }> };

  it("a run created on A is joined live from B with the SDK, and a resume after a cut continues exactly", async () => {
    const dir = sharedDir();
    const a = await instance(dir);
    const b = await instance(dir);
    const threadId = `lg-pg-${Date.now()}`;
    const run = await a.sdk.runs.create(threadId, "agent", {
      input: human("slow please"),
      ifNotExists: "create",
      streamMode: ["values", "messages-tuple"],
    });
    // B sees the run A holds as running, and follows it through the log until it ends.
    expect((await b.sdk.runs.get(threadId, run.run_id)).status).toBe("running");
    const parts: Array<{ event: string; data: unknown; id?: string | undefined }> = [];
    for await (const part of b.sdk.runs.joinStream(threadId, run.run_id)) parts.push({ event: part.event, data: part.data, id: part.id });
    expect(parts[0]).toMatchObject({ event: "metadata", data: { run_id: run.run_id, attempt: 1 } });
    expect(parts.at(-1)?.event).toBe("end");
    const deltas = parts.filter((p) => p.event === "messages").map((p) => (p.data as [{ content: string }])[0].content);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("a slow answer in several words");
    const values = parts.filter((p) => p.event === "values").at(-1)?.data as Values;
    expect(values.messages.map((m) => m.content)).toEqual(["slow please", "a slow answer in several words"]);
    expect((await a.sdk.runs.get(threadId, run.run_id)).status).toBe("success");

    // Cut on A after three frames, resumed on B from the last id: the two pieces are the whole stream.
    const head: typeof parts = [];
    for await (const part of a.sdk.runs.joinStream(threadId, run.run_id)) {
      head.push({ event: part.event, data: part.data, id: part.id });
      if (head.length === 3) break;
    }
    const tail: typeof parts = [];
    for await (const part of b.sdk.runs.joinStream(threadId, run.run_id, { lastEventId: head.at(-1)?.id })) {
      tail.push({ event: part.event, data: part.data, id: part.id });
    }
    expect([...head, ...tail]).toEqual(parts);
  });

  it("a run on A that asks the user is interrupted; B answers it with command.resume, and a second resume is a 409", async () => {
    const dir = sharedDir();
    const a = await instance(dir);
    const b = await instance(dir);
    const threadId = `lg-pg-ask-${Date.now()}`;
    const asked = (await a.sdk.runs.wait(threadId, "agent", { input: human("ask me"), ifNotExists: "create" })) as Values;
    expect(asked.__interrupt__?.[0]).toMatchObject({ id: "call-ask", value: { question: "Which colour?" } });
    const [first] = await b.sdk.runs.list(threadId);
    expect(first?.status).toBe("interrupted");

    const parts: Array<{ event: string; data: unknown }> = [];
    for await (const part of b.sdk.runs.stream(threadId, "agent", { command: { resume: "blue" }, streamMode: "values" })) parts.push(part);
    const after = parts.filter((p) => p.event === "values").at(-1)?.data as Values;
    expect(after.__interrupt__).toBeUndefined();
    expect(after.messages.slice(-2).map((m) => m.content)).toEqual(["blue", "You said: blue"]);
    // A sees the same thread: nothing left to answer.
    await expect(a.sdk.runs.wait(threadId, "agent", { command: { resume: "again" } })).rejects.toThrow(/HTTP 409/);
  });
});
