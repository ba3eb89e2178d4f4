import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { type ScriptedCall, type ScriptFunction, scriptedModelsPlugin } from "@antler/kernel/testing";
import { type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AntlerClient } from "../src/client/client.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

/** Two plugin tools in different groups, so an agent's `tool_groups` visibly changes what the model gets. */
const groupedTools = definePlugin({
  name: "grouped-tools",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    const tool = (name: string) =>
      defineTool({ name, description: `${name} for tests.`, schema: z.object({ q: z.string() }), run: ({ q }) => `${name}: ${q}` });
    ctx.tools.add(tool("web_lookup"), { group: "web" });
    ctx.tools.add(tool("shell_run"), { group: "bash" });
  },
});

const lastHuman = (messages: BaseMessage[]) => String([...messages].reverse().find((m) => HumanMessage.isInstance(m))?.content ?? "");
const answered = (messages: BaseMessage[]) => ToolMessage.isInstance(messages.at(-1));

/** Calls `tool` with `args` when the user's message contains `trigger`; otherwise answers with `reply`. */
function script(reply: string, actions: Record<string, { tool: string; args: Record<string, unknown> }> = {}): ScriptFunction {
  return (messages) => {
    if (answered(messages)) return { text: `${reply} (done)` };
    const text = lastHuman(messages);
    for (const [trigger, action] of Object.entries(actions)) {
      if (text.includes(trigger)) return { toolCalls: [{ name: action.tool, args: action.args }] };
    }
    return { text: reply };
  };
}

const QUILL_SOUL = "You are Quill, a terse research agent. Answer in one line.";
const WARM_SOUL = "You are Quill, warm and chatty. Greet the user by name.";

async function client(cwd = tempDir()) {
  const scripted = scriptedModelsPlugin({
    fast: script("fast answer", {
      design: {
        tool: "setup_agent",
        args: { soul: QUILL_SOUL, description: "Terse research helper", model: "smart", tool_groups: ["web"], thinking: false },
      },
    }),
    smart: script("smart answer", {
      warmer: { tool: "update_agent", args: { soul: WARM_SOUL, model: "fast", tool_groups: ["bash"], thinking: true } },
    }),
  });
  const c = await AntlerClient.create({
    config: {
      models: [
        { name: "fast", provider: "scripted" },
        { name: "smart", provider: "scripted" },
      ],
      storage: { backend: "memory" },
      title: { enabled: false },
    },
    plugins: [scripted, groupedTools],
    cwd,
    env: {},
    discover: false,
  });
  clients.push(c);
  const calls = (name: "fast" | "smart"): ScriptedCall[] => scripted.models.get(name)?.calls ?? [];
  return { c, calls, cwd };
}

const systemText = (call: ScriptedCall | undefined) => {
  const first = call?.messages[0];
  return SystemMessage.isInstance(first) ? first.text : "";
};

describe("custom agents", () => {
  it("an agent made by setup_agent sets the next turn's system prompt, model and tools; update_agent changes them again", async () => {
    const { c, calls } = await client();

    // Turn 1: bootstrap on the default model; it gets setup_agent and not update_agent.
    await c.chat("Let's design my research agent", { userId: "alice", agent: "quill", bootstrap: true });
    expect(calls("fast")).toHaveLength(2);
    expect(calls("fast")[0]?.tools).toContain("setup_agent");
    expect(calls("fast")[0]?.tools).not.toContain("update_agent");
    expect(systemText(calls("fast")[0])).not.toContain(QUILL_SOUL);

    // Turn 2: the agent's model (smart), its soul in the prompt, its tool groups (web only), update_agent.
    expect(await c.chat("What is new in fusion research?", { userId: "alice", agent: "quill" })).toBe("smart answer");
    expect(calls("fast")).toHaveLength(2);
    const second = calls("smart")[0];
    expect(systemText(second)).toContain(`<soul agent="quill">`);
    expect(systemText(second)).toContain(QUILL_SOUL);
    expect(second?.tools).toContain("web_lookup");
    expect(second?.tools).toContain("update_agent");
    expect(second?.tools).not.toContain("shell_run");
    expect(second?.tools).not.toContain("setup_agent");
    expect(await c.getAgent("quill", { userId: "alice" })).toMatchObject({ thinking: false });

    // Turn 3 asks the agent to change itself; turn 4 runs on what update_agent saved.
    await c.chat("Please be warmer from now on", { userId: "alice", agent: "quill" });
    expect(await c.chat("Hello again", { userId: "alice", agent: "quill" })).toBe("fast answer");
    const fourth = calls("fast").at(-1);
    expect(systemText(fourth)).toContain(WARM_SOUL);
    expect(systemText(fourth)).not.toContain(QUILL_SOUL);
    expect(fourth?.tools).toContain("shell_run");
    expect(fourth?.tools).not.toContain("web_lookup");
    expect(await c.getAgent("quill", { userId: "alice" })).toMatchObject({ thinking: true });
  });

  it("a soul-only update_agent (same model, same tools) still reaches the next turn: cached agents are rebuilt", async () => {
    const scripted = scriptedModelsPlugin({
      fast: script("ok", { soften: { tool: "update_agent", args: { soul: WARM_SOUL } } }),
    });
    const c = await AntlerClient.create({
      config: { models: [{ name: "fast", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
      plugins: [scripted],
      cwd: tempDir(),
      env: {},
      discover: false,
    });
    clients.push(c);
    await c.saveAgent("quill", { soul: QUILL_SOUL }, { userId: "alice" });
    await c.chat("please soften your tone", { userId: "alice", agent: "quill", threadId: "t1" });
    const calls = scripted.models.get("fast")?.calls;
    expect(systemText(calls?.[0])).toContain(QUILL_SOUL);
    await c.chat("hello", { userId: "alice", agent: "quill", threadId: "t1" });
    expect(systemText(calls?.at(-1))).toContain(WARM_SOUL);
    expect(systemText(calls?.at(-1))).not.toContain(QUILL_SOUL);
  });

  it("a model named by the request wins over the agent's model", async () => {
    const { c, calls } = await client();
    await c.saveAgent("quill", { soul: QUILL_SOUL, model: "smart" }, { userId: "alice" });
    expect(await c.chat("hi", { userId: "alice", agent: "quill", model: "fast" })).toBe("fast answer");
    expect(systemText(calls("fast")[0])).toContain(QUILL_SOUL);
    expect(calls("smart")).toHaveLength(0);
  });

  it("a plain run gets neither setup_agent nor update_agent, and every tool group", async () => {
    const { c, calls } = await client();
    await c.chat("hi", { userId: "alice" });
    const tools = calls("fast")[0]?.tools ?? [];
    expect(tools).not.toContain("setup_agent");
    expect(tools).not.toContain("update_agent");
    expect(tools).toEqual(expect.arrayContaining(["web_lookup", "shell_run"]));
  });

  it("another user can neither see nor use an agent", async () => {
    const { c, calls } = await client();
    await c.saveAgent("quill", { soul: QUILL_SOUL, description: "Alice's agent" }, { userId: "alice" });
    expect((await c.listAgents({ userId: "alice" })).agents.map((a) => a.name)).toEqual(["quill"]);
    expect((await c.listAgents({ userId: "bob" })).agents).toEqual([]);
    await expect(c.getAgent("quill", { userId: "bob" })).rejects.toMatchObject({ code: "ANTLER_ERR_AGENT_NOT_FOUND" });
    await expect(c.chat("hi", { userId: "bob", agent: "quill" })).rejects.toMatchObject({ code: "ANTLER_ERR_AGENT_NOT_FOUND" });
    await expect(c.deleteAgent("quill", { userId: "bob" })).rejects.toMatchObject({ code: "ANTLER_ERR_AGENT_NOT_FOUND" });
    expect(calls("fast")).toHaveLength(0);
    expect((await c.getAgent("quill", { userId: "alice" })).soul).toContain(QUILL_SOUL);
  });

  it("refuses agent names with path characters before touching the disk", async () => {
    const { c } = await client();
    for (const name of ["../bob/agents/x", "a/b", "Quill", ".hidden", ""]) {
      await expect(c.saveAgent(name, { soul: "x" }, { userId: "alice" })).rejects.toMatchObject({ code: "ANTLER_ERR_AGENT_INVALID" });
      await expect(c.chat("hi", { userId: "alice", agent: name })).rejects.toMatchObject({ code: "ANTLER_ERR_AGENT_INVALID" });
    }
  });

  it("reports a typo in an agent's config.yaml with its line and a suggestion, and an unknown model by name", async () => {
    const { c, cwd } = await client();
    await c.saveAgent("quill", { soul: QUILL_SOUL }, { userId: "alice" });
    const file = join(cwd, ".antler", "users", "alice", "agents", "quill", "config.yaml");
    writeFileSync(file, "name: quill\ndescripton: typo here\n");
    const err = (await c.chat("hi", { userId: "alice", agent: "quill" }).catch((e: unknown) => e)) as Error & { code: string };
    expect(err.code).toBe("ANTLER_ERR_CONFIG_INVALID");
    expect(err.message).toContain(`${file}:2`);
    expect(err.message).toContain('"description"');

    writeFileSync(file, "model: gpt-nonexistent\n");
    const bad = (await c.chat("hi", { userId: "alice", agent: "quill" }).catch((e: unknown) => e)) as Error & { code: string };
    expect(bad.code).toBe("ANTLER_ERR_AGENT_INVALID");
    expect(bad.message).toContain("gpt-nonexistent");
    expect((bad as unknown as { hint: string }).hint).toContain("fast, smart");
    await expect(c.saveAgent("quill", { soul: "x", model: "gpt-nonexistent" }, { userId: "alice" })).rejects.toMatchObject({
      code: "ANTLER_ERR_AGENT_INVALID",
    });
  });

  it("lists agents shipped next to config.yaml for every user; a user's own agent of the same name shadows it", async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, "agents", "editor"), { recursive: true });
    writeFileSync(join(cwd, "agents", "editor", "SOUL.md"), "You are the house editor.\n");
    writeFileSync(join(cwd, "agents", "editor", "config.yaml"), "description: Edits drafts\ntool_groups: [web]\n");
    const { c, calls } = await client(cwd);
    expect((await c.listAgents({ userId: "bob" })).agents).toEqual([
      { name: "editor", description: "Edits drafts", model: null, tool_groups: ["web"], skills: null, thinking: null, scope: "shared" },
    ]);
    await c.chat("fix this", { userId: "bob", agent: "editor" });
    expect(systemText(calls("fast")[0])).toContain("You are the house editor.");
    await expect(c.deleteAgent("editor", { userId: "bob" })).rejects.toMatchObject({ code: "ANTLER_ERR_AGENT_CONFLICT" });

    await c.saveAgent("editor", { soul: "You are Alice's own editor.", description: "Mine" }, { userId: "alice" });
    expect((await c.listAgents({ userId: "alice" })).agents.map((a) => [a.name, a.scope])).toEqual([["editor", "user"]]);
    await c.deleteAgent("editor", { userId: "alice" });
    expect((await c.listAgents({ userId: "alice" })).agents.map((a) => [a.name, a.scope])).toEqual([["editor", "shared"]]);
    expect(readFileSync(join(cwd, "agents", "editor", "SOUL.md"), "utf8")).toContain("house editor");
  });

  it("update_agent refuses a model that is not configured and leaves the agent as it was", async () => {
    const scripted = scriptedModelsPlugin({
      fast: script("ok", { switch: { tool: "update_agent", args: { model: "gpt-nonexistent" } } }),
    });
    const c = await AntlerClient.create({
      config: { models: [{ name: "fast", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
      plugins: [scripted],
      cwd: tempDir(),
      env: {},
      discover: false,
    });
    clients.push(c);
    await c.saveAgent("quill", { soul: QUILL_SOUL }, { userId: "alice" });
    await c.chat("switch models please", { userId: "alice", agent: "quill" });
    const reply = scripted.models.get("fast")?.calls[1]?.messages.at(-1);
    expect(ToolMessage.isInstance(reply) && reply.status).toBe("error");
    expect(String(reply?.content)).toContain("gpt-nonexistent");
    expect((await c.getAgent("quill", { userId: "alice" })).model).toBeNull();
  });
});
