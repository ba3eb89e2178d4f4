import { ErrorCodes, isAntlerError, type KernelConfigInput } from "@antler/kernel";
import { type OpenAICompatibleServer, startOpenAICompatibleServer } from "@antler/kernel/testing";
import openaiPlugin from "@antler/plugin-openai";
import { afterEach, describe, expect, it } from "vitest";
import { runOptions } from "../src/cli/commands.js";
import { AntlerClient } from "../src/client/client.js";
import { tempDir } from "./fixtures.js";

type ModelEntry = NonNullable<KernelConfigInput["models"]>[number];
const clients: AntlerClient[] = [];
const servers: OpenAICompatibleServer[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(extra: Partial<ModelEntry> = {}) {
  const s = await startOpenAICompatibleServer({ handler: () => ({ text: "ok" }) });
  servers.push(s);
  const dir = tempDir();
  // o4-mini: a name ChatOpenAI treats as a reasoning model, so its effort goes out as `reasoning_effort`.
  const model: ModelEntry = {
    name: "o4",
    provider: "openai",
    model: "o4-mini",
    base_url: s.url,
    api_key: "sk-test",
    supports_thinking: true,
    reasoning_effort: "low",
    ...extra,
  };
  const c = await AntlerClient.create({
    config: { base_dir: dir, models: [model], storage: { backend: "memory" }, title: { enabled: false } },
    plugins: [openaiPlugin],
    cwd: dir,
    env: {},
    discover: false,
  });
  clients.push(c);
  const sent = () =>
    s.requests.filter((r) => r.path === "/v1/chat/completions").map((r) => (r.body as { reasoning_effort?: unknown }).reasoning_effort);
  return { c, sent };
}

describe("a run's own reasoning_effort", () => {
  it("replaces the entry's on the wire for that run only; runs without one keep the entry's", async () => {
    const { c, sent } = await setup();
    await c.chat("a", { threadId: "t1", reasoningEffort: "high" });
    await c.chat("b", { threadId: "t1" });
    await c.chat("c", { threadId: "t1", reasoningEffort: "minimal" });
    expect(sent()).toEqual(["high", "low", "minimal"]);
  });

  it("is read from context.reasoning_effort too, stamped on the run's context, and dropped when the run has thinking off", async () => {
    const { c, sent } = await setup();
    const result = await c.invoke("a", { threadId: "t2", context: { reasoning_effort: "medium" } });
    await c.chat("b", { threadId: "t2", thinking: false, reasoningEffort: "high" });
    expect(sent()).toEqual(["medium", undefined]);
    const record = await c.getRun("t2", result.run_id);
    expect((record.kwargs.context as Record<string, unknown>).reasoning_effort).toBe("medium");
  });

  it("refuses a value outside minimal|low|medium|high with CONFIG_INVALID naming where it came from, before any call", async () => {
    const { c, sent } = await setup();
    const direct = await c.chat("a", { reasoningEffort: "extreme" as never }).catch((e: unknown) => e);
    expect(isAntlerError(direct, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((direct as { where?: string }).where).toBe("reasoning_effort");
    const fromContext = await c.chat("a", { context: { reasoning_effort: 3 } }).catch((e: unknown) => e);
    expect((fromContext as { where?: string }).where).toBe("context.reasoning_effort");
    expect(sent()).toEqual([]);
  });

  it("is ignored on a model without supports_thinking (no reasoning_effort sent)", async () => {
    const { c, sent } = await setup({ supports_thinking: false, reasoning_effort: undefined });
    await c.chat("a", { reasoningEffort: "high" });
    expect(sent()).toEqual([undefined]);
  });

  it("antler run --reasoning-effort sets the turn's option", () => {
    expect(runOptions(["hi", "--reasoning-effort", "high"]).turn.reasoningEffort).toBe("high");
    expect(runOptions(["hi"]).turn).not.toHaveProperty("reasoningEffort");
  });
});
