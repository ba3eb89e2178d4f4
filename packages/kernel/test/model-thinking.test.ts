import { afterEach, describe, expect, it } from "vitest";
import { type AntlerError, type ConfigIssue, definePlugin, type Kernel, type ModelConfig } from "../src/index.js";
import { createTestKernel, ScriptedChatModel } from "../src/testing/index.js";

// A provider that records the entry it was asked to build, so a test reads what a real provider would get.
function recordingProvider(received: ModelConfig[]) {
  return definePlugin({
    name: "recording-models",
    version: "0.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.models.addProvider({
        id: "recording",
        create(config) {
          received.push(config);
          return new ScriptedChatModel([]);
        },
      });
      // Builds its `model:` entry through env.createModel, like a cassette wrapping the real model.
      ctx.models.addProvider({ id: "wrapper", create: (config, env) => env.createModel(config.model as string) });
    },
  });
}

const CONFIG = `
models:
  - name: reasoner
    provider: recording
    model: base-model
    temperature: 0.7
    supports_thinking: true
    options: { keep: 1, drop: 2 }
    when_thinking_enabled:
      model: thinking-model
      options: { thinking: { type: enabled, budget_tokens: 2048 }, drop: null }
    when_thinking_disabled:
      max_tokens: 512
      options: { thinking: { type: disabled } }
  - name: plain
    provider: recording
    model: plain-model
    when_thinking_disabled:
      temperature: 0
  - name: wrapped
    provider: wrapper
    model: reasoner
    supports_thinking: true
`;

let kernel: (Kernel & { logs: Array<Record<string, unknown>> }) | undefined;
afterEach(async () => {
  await kernel?.close();
  kernel = undefined;
});

async function boot(received: ModelConfig[], configText = CONFIG) {
  kernel = await createTestKernel({ plugins: [recordingProvider(received)], configText });
  return kernel;
}

describe("when_thinking_enabled / when_thinking_disabled", () => {
  it("thinking on applies when_thinking_enabled: its keys replace the entry's, options merge key by key and null drops one", async () => {
    const received: ModelConfig[] = [];
    await (await boot(received)).createModel("reasoner", { thinking: true });
    const [config] = received;
    expect(config?.model).toBe("thinking-model");
    expect(config?.temperature).toBe(0.7);
    expect(config?.max_tokens).toBeUndefined();
    expect(config?.options).toEqual({ keep: 1, thinking: { type: "enabled", budget_tokens: 2048 } });
    expect(config).not.toHaveProperty("when_thinking_enabled");
    expect(config).not.toHaveProperty("when_thinking_disabled");
  });

  it("thinking off applies when_thinking_disabled and not the enabled block", async () => {
    const received: ModelConfig[] = [];
    await (await boot(received)).createModel("reasoner", { thinking: false });
    expect(received[0]).toMatchObject({ model: "base-model", max_tokens: 512 });
    expect(received[0]?.options).toEqual({ keep: 1, drop: 2, thinking: { type: "disabled" } });
  });

  it("without a thinking option the entry is built as written", async () => {
    const received: ModelConfig[] = [];
    await (await boot(received)).createModel("reasoner");
    expect(received[0]?.model).toBe("base-model");
    expect(received[0]?.options).toEqual({ keep: 1, drop: 2 });
  });

  it("thinking asked of a model without supports_thinking is off (its disabled block applies) and says so in a warning", async () => {
    const received: ModelConfig[] = [];
    const k = await boot(received);
    await k.createModel("plain", { thinking: true });
    expect(received[0]?.temperature).toBe(0);
    const warning = k.logs.find((l) => l.level === "warn");
    expect(warning?.msg).toContain("models[1] does not declare supports_thinking");
    expect(warning?.model).toBe("plain");
  });

  it("a model another provider builds through env.createModel gets the same thinking switch", async () => {
    const received: ModelConfig[] = [];
    const k = await boot(received);
    await k.createModel("wrapped", { thinking: true });
    await k.createModel("wrapped", { thinking: false });
    expect(received.map((c) => c.model)).toEqual(["thinking-model", "base-model"]);
  });

  it("reasoning_effort reaches the provider with thinking on, and is dropped with thinking off unless the disabled block names one", async () => {
    const received: ModelConfig[] = [];
    const k = await boot(
      received,
      "models:\n  - name: r\n    provider: recording\n    supports_thinking: true\n    reasoning_effort: high\n" +
        "  - name: s\n    provider: recording\n    supports_thinking: true\n    reasoning_effort: high\n    when_thinking_disabled: { reasoning_effort: minimal }\n",
    );
    await k.createModel("r", { thinking: true });
    await k.createModel("r", { thinking: false });
    await k.createModel("r");
    await k.createModel("s", { thinking: false });
    expect(received.map((c) => c.reasoning_effort)).toEqual(["high", undefined, "high", "minimal"]);
  });
});

describe("thinking blocks in config.yaml", () => {
  async function issues(configText: string): Promise<ConfigIssue[]> {
    const err = await boot([], configText).then(
      () => undefined,
      (e: unknown) => e as AntlerError,
    );
    expect(err?.code).toBe("ANTLER_ERR_CONFIG_INVALID");
    return err?.details.issues as ConfigIssue[];
  }

  it("rejects when_thinking_enabled on a model without supports_thinking, pointing at the block", async () => {
    const [issue] = await issues("models:\n  - name: a\n    provider: recording\n    when_thinking_enabled:\n      model: b\n");
    expect(issue).toMatchObject({ path: "models[0].when_thinking_enabled", line: 5 });
    expect(issue?.message).toContain("supports_thinking: true");
  });

  it("rejects a key a thinking block may not override, with a suggestion", async () => {
    const [issue] = await issues(
      "models:\n  - name: a\n    provider: recording\n    supports_thinking: true\n    when_thinking_enabled:\n      max_token: 10\n",
    );
    expect(issue).toMatchObject({ path: "models[0].when_thinking_enabled.max_token", line: 6, suggestion: "max_tokens" });
  });

  it("rejects reasoning_effort on a model without supports_thinking, and a value outside minimal|low|medium|high", async () => {
    const [issue] = await issues("models:\n  - name: a\n    provider: recording\n    reasoning_effort: low\n");
    expect(issue).toMatchObject({ path: "models[0].reasoning_effort", line: 4 });
    expect(issue?.message).toContain("supports_thinking: true");
    const [bad] = await issues("models:\n  - name: a\n    provider: recording\n    supports_thinking: true\n    reasoning_effort: max\n");
    expect(bad).toMatchObject({ path: "models[0].reasoning_effort", line: 5 });
  });

  it("rejects max_tokens above the declared max_output_tokens, pointing at max_tokens", async () => {
    const [issue] = await issues("models:\n  - name: a\n    provider: recording\n    max_output_tokens: 8192\n    max_tokens: 10000\n");
    expect(issue).toMatchObject({ path: "models[0].max_tokens", line: 5 });
    expect(issue?.message).toContain("max_output_tokens");
  });

  it("declared capabilities reach the provider: supports_tools defaults to true, context_window and max_output_tokens as written", async () => {
    const received: ModelConfig[] = [];
    const k = await boot(
      received,
      "models:\n  - name: a\n    provider: recording\n    context_window: 32768\n    max_output_tokens: 4096\n  - name: b\n    provider: recording\n    supports_tools: false\n",
    );
    await k.createModel("a");
    await k.createModel("b");
    expect(received[0]).toMatchObject({ supports_tools: true, context_window: 32768, max_output_tokens: 4096 });
    expect(received[1]?.supports_tools).toBe(false);
  });
});
