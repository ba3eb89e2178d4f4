import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type OpenAICompatibleServer, type OpenAIServerOptions, startOpenAICompatibleServer } from "@antler/kernel/testing";
import openaiPlugin from "@antler/plugin-openai";
import { AntlerClient, type EndEvent, type StreamEvent } from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import subagentsPlugin from "../src/index.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function server(options: OpenAIServerOptions): Promise<OpenAICompatibleServer> {
  const s = await startOpenAICompatibleServer(options);
  cleanups.push(() => s.close());
  return s;
}

describe("a run's cost includes its subagents' model calls (loopback OpenAI servers)", () => {
  it("the end event's cost equals the sum over the lead's and the subagent's calls, each at its answering model's price", async () => {
    const lead = await server({
      script: [
        {
          toolCalls: [{ name: "task", args: { description: "look it up", prompt: "Find the answer.", subagent_type: "general-purpose" } }],
          usage: { input_tokens: 1000, output_tokens: 200 },
        },
        { text: "The subagent found 42.", usage: { input_tokens: 1500, output_tokens: 100 } },
      ],
    });
    const sub = await server({
      script: [{ text: "The answer is 42.", usage: { input_tokens: 3000, output_tokens: 1000 } }],
    });
    const cwd = mkdtempSync(join(tmpdir(), "antler-subagent-cost-"));
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
    const entry = (name: string, s: OpenAICompatibleServer, pricing: { input: number; output: number }) => ({
      name,
      provider: "openai",
      model: `${name}-id`,
      base_url: s.url,
      api_key: "sk-test",
      max_retries: 0,
      pricing,
    });
    const client = await AntlerClient.create({
      config: {
        models: [entry("lead", lead, { input: 2, output: 10 }), entry("sub", sub, { input: 0.5, output: 1 })],
        default_model: "lead",
        storage: { backend: "memory" },
        title: { enabled: false },
        logging: { level: "warn" },
        subagents: { enabled: true },
      },
      plugins: [openaiPlugin, { plugin: subagentsPlugin, config: { agents: { "general-purpose": { model: "sub" } } } }],
      cwd,
      env: {},
      discover: false,
    });
    cleanups.push(() => client.close());
    const events: StreamEvent[] = [];
    for await (const event of client.stream("What is the answer?", { threadId: "t-cost", runId: "r-cost" })) events.push(event);
    const end = events.at(-1) as EndEvent;
    expect(end.type).toBe("end");
    // lead: (1000 × 2 + 200 × 10) + (1500 × 2 + 100 × 10) = 8000 micro-dollars; sub: 3000 × 0.5 + 1000 × 1 = 2500.
    expect(end.data.cost?.by_model.lead).toBeCloseTo(0.008, 10);
    expect(end.data.cost?.by_model.sub).toBeCloseTo(0.0025, 10);
    expect(end.data.cost?.usd).toBeCloseTo(0.0105, 10);
    expect((await client.getRun("t-cost", "r-cost")).cost_usd).toBeCloseTo(0.0105, 10);
    // Both servers were called as the script says: the lead twice, the subagent once.
    expect(lead.requests.filter((r) => r.path === "/v1/chat/completions")).toHaveLength(2);
    expect(sub.requests.filter((r) => r.path === "/v1/chat/completions")).toHaveLength(1);
  });
});
