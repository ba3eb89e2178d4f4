import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { definePlugin, type ModelConfig } from "@antler/kernel";
import { captureLogs, ScriptedChatModel } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { runOptions } from "../src/cli/commands.js";
import { AntlerClient, type RunCallOptions } from "../src/client/client.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

// Each model answers with the `mode` option it was built with, so a run's reply says which thinking block its
// model got; `built` keeps every entry the provider was asked for.
function probeModels(built: ModelConfig[]) {
  return definePlugin({
    name: "thinking-probe",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.models.addProvider({
        id: "probe",
        create(config) {
          built.push(config);
          return new ScriptedChatModel(() => ({ text: `${config.name}:${String(config.options?.mode ?? "as written")}` }));
        },
      });
    },
  });
}

async function client(cwd = tempDir()) {
  const built: ModelConfig[] = [];
  const logs = captureLogs({ level: "warn" });
  const c = await AntlerClient.create({
    config: {
      models: [
        {
          name: "reasoner",
          provider: "probe",
          supports_thinking: true,
          when_thinking_enabled: { options: { mode: "thinking" } },
          when_thinking_disabled: { options: { mode: "quick" } },
        },
        { name: "plain", provider: "probe", when_thinking_disabled: { options: { mode: "quick" } } },
      ],
      storage: { backend: "memory" },
      title: { enabled: false },
    },
    plugins: [probeModels(built)],
    logger: logs.logger,
    cwd,
    env: {},
    discover: false,
  });
  clients.push(c);
  return { c, built, logs: logs.lines, cwd };
}

const ask = (c: AntlerClient, options: RunCallOptions = {}) => c.chat("hello", options);

describe("a run's thinking switch", () => {
  it("is on by default on a model that supports thinking, and the run's context says so", async () => {
    const { c } = await client();
    const threadId = "t-default";
    expect(await ask(c, { threadId })).toBe("reasoner:thinking");
    const [run] = await c.listRuns(threadId);
    expect(run?.kwargs.context).toMatchObject({ thinking_enabled: true });
  });

  it("thinking: false builds the model with its when_thinking_disabled block; each setting gets its own cached model", async () => {
    const { c, built } = await client();
    expect(await ask(c, { thinking: false })).toBe("reasoner:quick");
    expect(await ask(c, { thinking: true })).toBe("reasoner:thinking");
    expect(await ask(c, { thinking: false })).toBe("reasoner:quick");
    expect(built.map((m) => m.options?.mode)).toEqual(["quick", "thinking"]);
  });

  it("context.thinking_enabled (DeerFlow's name) switches it too; the thinking option wins over it", async () => {
    const { c } = await client();
    expect(await ask(c, { context: { thinking_enabled: false } })).toBe("reasoner:quick");
    expect(await ask(c, { thinking: true, context: { thinking_enabled: false } })).toBe("reasoner:thinking");
  });

  it("a custom agent's thinking: false is the default for its runs, and the request overrides it", async () => {
    const { c } = await client();
    await c.saveAgent("brief", { soul: "Be brief.", model: "reasoner", thinking: false });
    expect((await c.getAgent("brief")).thinking).toBe(false);
    expect(await ask(c, { agent: "brief" })).toBe("reasoner:quick");
    expect(await ask(c, { agent: "brief", thinking: true })).toBe("reasoner:thinking");
    expect(await ask(c, { agent: "brief", context: { thinking_enabled: true } })).toBe("reasoner:thinking");
  });

  it("is off on a model without supports_thinking, with a warning when the request asked for it", async () => {
    const { c, logs } = await client();
    expect(await ask(c, { model: "plain" })).toBe("plain:quick");
    expect(logs.filter((l) => l.level === "warn")).toEqual([]);
    expect(await ask(c, { model: "plain", thinking: true })).toBe("plain:quick");
    const warning = logs.find((l) => l.level === "warn");
    expect(warning?.msg).toContain('model "plain" does not declare supports_thinking');
  });

  it("an agent config.yaml whose thinking is not a boolean is a located error", async () => {
    const cwd = tempDir();
    const dir = join(cwd, ".antler", "users", "default", "agents", "brief");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "SOUL.md"), "Be brief.\n");
    writeFileSync(join(dir, "config.yaml"), "description: short answers\nthinking: sometimes\n");
    const { c } = await client(cwd);
    const err = (await ask(c, { agent: "brief" }).catch((e: unknown) => e)) as Error & { code: string };
    expect(err.code).toBe("ANTLER_ERR_CONFIG_INVALID");
    expect(err.message).toContain(`${join(dir, "config.yaml")}:2`);
    expect(err.message).toContain("thinking");
  });

  it("refuses a context.thinking_enabled that is not a boolean, naming the key", async () => {
    const { c, built } = await client();
    const err = (await ask(c, { context: { thinking_enabled: "yes" } }).catch((e: unknown) => e)) as Error & { code: string };
    expect(err.code).toBe("ANTLER_ERR_CONFIG_INVALID");
    expect(err.message).toContain("context.thinking_enabled must be true or false");
    expect(built).toEqual([]);
  });
});

describe("antler run|chat --thinking / --no-thinking", () => {
  it("parse to the run's thinking option; the last one given wins, and neither leaves the default", () => {
    expect(runOptions(["hi", "--no-thinking"]).turn.thinking).toBe(false);
    expect(runOptions(["--thinking", "hi"]).turn.thinking).toBe(true);
    expect(runOptions(["--thinking", "hi", "--no-thinking"]).turn.thinking).toBe(false);
    expect(runOptions(["hi"]).turn.thinking).toBeUndefined();
  });
});
