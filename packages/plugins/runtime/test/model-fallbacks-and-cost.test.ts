import { setTimeout as sleep } from "node:timers/promises";
import { type AntlerError, isAntlerError, type KernelConfigInput } from "@antler/kernel";
import { type OpenAICompatibleServer, type OpenAIServerOptions, startOpenAICompatibleServer } from "@antler/kernel/testing";
import openaiPlugin from "@antler/plugin-openai";
import { afterEach, describe, expect, it } from "vitest";
import { AntlerClient } from "../src/client/client.js";
import type { EndEvent, StreamEvent } from "../src/client/events.js";
import { RuntimeErrorCodes } from "../src/errors.js";
import { tempDir } from "./fixtures.js";

type ModelEntry = NonNullable<KernelConfigInput["models"]>[number];

const clients: AntlerClient[] = [];
const servers: OpenAICompatibleServer[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(options: OpenAIServerOptions): Promise<OpenAICompatibleServer> {
  const s = await startOpenAICompatibleServer(options);
  servers.push(s);
  return s;
}

const entry = (name: string, s: OpenAICompatibleServer, extra: Partial<ModelEntry> = {}): ModelEntry => ({
  name,
  provider: "openai",
  model: `${name}-id`,
  base_url: s.url,
  api_key: "sk-test",
  max_retries: 0,
  ...extra,
});

async function client(models: ModelEntry[], extra: Record<string, unknown> = {}): Promise<AntlerClient> {
  const dir = tempDir();
  const c = await AntlerClient.create({
    config: { base_dir: dir, models, storage: { backend: "memory" }, title: { enabled: false }, ...extra },
    plugins: [openaiPlugin],
    cwd: dir,
    env: {},
    discover: false,
  });
  clients.push(c);
  return c;
}

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const completions = (s: OpenAICompatibleServer) => s.requests.filter((r) => r.path === "/v1/chat/completions");
const fail = (status: number, message: string, headers?: Record<string, string>) => ({
  status,
  body: { error: { message, type: "server_error" } },
  ...(headers ? { headers } : {}),
});
// $1 per million input tokens and $2 per million output tokens: 1,000 in + 500 out = $0.002.
const pricing = { input: 1, output: 2 };

describe("a run with model fallbacks (loopback OpenAI server)", () => {
  it("primary 429 with Retry-After, then 500; the fallback answers; the events and the run record keep every attempt", async () => {
    const primary = await server({ handler: (_b, i) => (i === 0 ? fail(429, "slow down", { "retry-after": "1" }) : fail(500, "broke")) });
    const backup = await server({ script: [{ text: "The backup answers.", usage: { input_tokens: 1000, output_tokens: 500 } }] });
    const c = await client([
      entry("primary", primary, {
        fallbacks: ["backup"],
        retry: { attempts: 1, backoff_seconds: 20 },
        pricing: { input: 100, output: 100 },
      }),
      entry("backup", backup, { pricing }),
    ]);
    const events = await collect(c.stream("hi", { threadId: "t-fallback", runId: "r-fallback" }));
    const attempts = events.flatMap((e) => (e.type === "custom" && e.data.type === "model_attempt" ? [e.data] : []));
    expect(attempts.map((a) => [a.model, a.attempt, a.outcome, a.status, a.next, a.wait_ms])).toEqual([
      ["primary", 1, "error", 429, "retry", 1000],
      ["primary", 2, "error", 500, "fallback", undefined],
      ["backup", 3, "success", undefined, undefined, undefined],
    ]);
    // The servers saw the same order: the primary twice, then the backup.
    expect(completions(primary)).toHaveLength(2);
    expect(completions(backup)).toHaveLength(1);
    const text = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" ? [e.data.content] : [])).join("");
    expect(text).toBe("The backup answers.");
    const end = events.at(-1) as EndEvent;
    // Priced at the backup's rates: the model that answered, not the one asked.
    expect(end.data.cost?.by_model).toEqual({ backup: 0.002 });
    const record = await c.getRun("t-fallback", "r-fallback");
    expect(record.status).toBe("success");
    expect(record.cost_usd).toBeCloseTo(0.002, 10);
    expect(record.model_attempts.map((a) => [a.model, a.reason, a.next])).toEqual([
      ["primary", "rate_limited", "retry"],
      ["primary", "server_error", "fallback"],
      ["backup", undefined, undefined],
    ]);
  });

  it("a run whose model answers first time has no attempts recorded and its cost in the end event and record", async () => {
    const s = await server({
      script: [
        { text: "one", usage: { input_tokens: 2000, output_tokens: 1000 } },
        { text: "two", usage: { input_tokens: 3000, output_tokens: 0 } },
      ],
    });
    const c = await client([entry("gpt", s, { pricing })]);
    const first = (await collect(c.stream("a", { threadId: "t1", runId: "r1" }))).at(-1) as EndEvent;
    expect(first.data.cost).toEqual({ usd: 0.004, by_model: { gpt: 0.004 } });
    // The second turn of the thread costs its own call only, not the thread's history.
    const second = (await collect(c.stream("b", { threadId: "t1", runId: "r2" }))).at(-1) as EndEvent;
    expect(second.data.cost?.usd).toBeCloseTo(0.003, 10);
    const record = await c.getRun("t1", "r2");
    expect(record.cost_usd).toBeCloseTo(0.003, 10);
    expect(record.model_attempts).toEqual([]);
  });

  it("an unpriced run has cost 0 in its end event and null in its record", async () => {
    const s = await server({ script: [{ text: "free", usage: { input_tokens: 10, output_tokens: 10 } }] });
    const c = await client([entry("gpt", s)]);
    const end = (await collect(c.stream("a", { threadId: "t1", runId: "r1" }))).at(-1) as EndEvent;
    expect(end.data.cost).toEqual({ usd: 0, by_model: {} });
    expect((await c.getRun("t1", "r1")).cost_usd).toBeNull();
  });
});

describe("budgets", () => {
  it("refuses a user's run once their runs today cost the budget, naming it; other users still run", async () => {
    const s = await server({ handler: () => ({ text: "ok", usage: { input_tokens: 1000, output_tokens: 500 } }) });
    const c = await client([entry("gpt", s, { pricing })], { budgets: [{ name: "tiny-daily", usd_per_user_per_day: 0.003 }] });
    await c.invoke("first", { userId: "alice" });
    await c.invoke("second", { userId: "alice" }); // $0.002 spent before it: under the budget
    const refused = await c.invoke("third", { userId: "alice" }).catch((e: unknown) => e);
    expect(isAntlerError(refused, RuntimeErrorCodes.BUDGET_EXCEEDED)).toBe(true);
    expect((refused as AntlerError).message).toContain('budget "tiny-daily"');
    expect((refused as AntlerError).details).toMatchObject({ budget: "tiny-daily", user_id: "alice", limit_usd: 0.003 });
    expect((refused as AntlerError).where).toBe("budgets[0]");
    expect(completions(s)).toHaveLength(2);
    await expect(c.invoke("bob's first", { userId: "bob" })).resolves.toMatchObject({ status: "success" });
  });

  it("a budget limited to some users leaves the others alone", async () => {
    const s = await server({ handler: () => ({ text: "ok", usage: { input_tokens: 1000, output_tokens: 500 } }) });
    const c = await client([entry("gpt", s, { pricing })], { budgets: [{ name: "interns", usd_per_user_per_day: 0, users: ["intern"] }] });
    await expect(c.invoke("hi", { userId: "intern" })).rejects.toThrow('budget "interns"');
    await expect(c.invoke("hi", { userId: "staff" })).resolves.toMatchObject({ status: "success" });
  });

  it("rejects a negative budget and duplicate budget names at boot", async () => {
    const s = await server({ script: [] });
    const negative = await client([entry("gpt", s)], { budgets: [{ name: "x", usd_per_user_per_day: -1 }] }).catch((e: unknown) => e);
    expect((negative as Error).message).toContain("budgets[0].usd_per_user_per_day");
    const twice = await client([entry("gpt", s)], {
      budgets: [
        { name: "x", usd_per_user_per_day: 1 },
        { name: "x", usd_per_user_per_day: 2 },
      ],
    }).catch((e: unknown) => e);
    expect((twice as Error).message).toContain("budget names must be unique");
  });
});

describe("max_concurrency across runs", () => {
  it("two concurrent runs share the model's one slot: the server never has more than one call in flight", async () => {
    let inFlight = 0;
    let most = 0;
    const s = await server({
      handler: async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await sleep(150);
        inFlight -= 1;
        return { text: "done" };
      },
    });
    const c = await client([entry("gpt", s, { max_concurrency: 1 })]);
    const results = await Promise.all([c.invoke("one", { threadId: "t1" }), c.invoke("two", { threadId: "t2" })]);
    expect(results.map((r) => r.output)).toEqual(["done", "done"]);
    expect(completions(s)).toHaveLength(2);
    expect(most).toBe(1);
  });
});
