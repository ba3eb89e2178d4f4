import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { definePlugin } from "@antler/kernel";
import type { ScriptFunction } from "@antler/kernel/testing";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it, vi } from "vitest";
import { SkillCatalog, skillsOf } from "../src/index.js";
import {
  answered,
  countText,
  lastHumanText,
  REPORT_SKILL,
  SOURCES_SKILL,
  skillsClient,
  systemText,
  temp,
  writePublicSkills,
} from "./fixtures.js";

/** Calls `tool` once when the user's message contains `trigger`, then answers; otherwise answers at once. */
function callOnce(trigger: string, tool: string): ScriptFunction {
  return (messages) => {
    if (answered(messages)) return { text: "done" };
    return lastHumanText(messages).includes(trigger) ? { toolCalls: [{ name: tool, args: { q: "x" } }] } : { text: "plain" };
  };
}

const toolMessages = (messages: BaseMessage[]) => messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));

/** Counts lead-agent builds: the runtime creates a middleware once per agent it builds, and reuses cached agents. */
function agentBuilds() {
  let builds = 0;
  const plugin = definePlugin({
    name: "test-agent-builds",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.middleware.add({
        name: "CountBuilds",
        create: () => {
          builds += 1;
          return null;
        },
      });
    },
  });
  return { plugin, builds: () => builds };
}

function setupRoot() {
  const root = temp.tempDir("antler-skills-mw-");
  writePublicSkills(root, { "report-writing": REPORT_SKILL, "source-evaluation": SOURCES_SKILL });
  return root;
}

describe("skills in the prompt", () => {
  it("lists every enabled skill with its description and /mnt/skills location, and leaves a disabled one out", async () => {
    const root = setupRoot();
    const { client, calls } = await skillsClient({ root, script: [{ text: "hi" }, { text: "hi again" }] });
    await client.chat("hello", { threadId: "t1" });
    const prompt = systemText(calls()[0]);
    expect(prompt).toContain("<available_skills>");
    expect(prompt).toContain("<name>report-writing</name>");
    expect(prompt).toContain("<description>Write a structured research report with sources.</description>");
    expect(prompt).toContain("<location>/mnt/skills/public/report-writing/SKILL.md</location>");
    expect(prompt).toContain("<name>source-evaluation</name>");
    // The body is for progressive disclosure (read_file), never in the prompt.
    expect(prompt).not.toContain("REPORT-BODY-MARKER");

    skillsOf(client).updateSkill("report-writing", { enabled: false });
    await client.chat("hello", { threadId: "t2" });
    expect(systemText(calls()[1])).not.toContain("report-writing");
    expect(systemText(calls()[1])).toContain("<name>source-evaluation</name>");
  });

  it("reads the catalog once per turn: every model call of the turn gets the same skills section", async () => {
    const root = setupRoot();
    const { client, calls } = await skillsClient({ root, script: callOnce("look", "web_lookup") });
    const views = vi.spyOn(SkillCatalog.prototype, "view");
    try {
      await client.chat("look it up", { threadId: "t1" });
      expect(calls()).toHaveLength(2);
      expect(views).toHaveBeenCalledTimes(1);
      expect(systemText(calls()[1])).toBe(systemText(calls()[0]));
      expect(systemText(calls()[1])).toContain("<name>report-writing</name>");
      await client.chat("look again", { threadId: "t1" });
      expect(views).toHaveBeenCalledTimes(2);
    } finally {
      views.mockRestore();
    }
  });

  it("with deferred_discovery lists names only and offers describe_skill, which answers with the location", async () => {
    const root = setupRoot();
    const script: ScriptFunction = (messages) =>
      answered(messages) ? { text: "ok" } : { toolCalls: [{ name: "describe_skill", args: { name: "report-writing" } }] };
    const { client, calls } = await skillsClient({ root, script, skills: { deferred_discovery: true } });
    await client.chat("what skills?", { threadId: "t1" });
    const prompt = systemText(calls()[0]);
    expect(prompt).toContain("<skill_index>report-writing, source-evaluation</skill_index>");
    expect(prompt).not.toContain("<available_skills>");
    expect(calls()[0]?.tools).toContain("describe_skill");
    const described = toolMessages(calls()[1]?.messages ?? [])[0];
    expect(String(described?.content)).toContain("location: /mnt/skills/public/report-writing/SKILL.md");
    expect(String(described?.content)).toContain("allowed-tools: write_report, web_lookup");
  });
});

describe("/skill-name activation", () => {
  it("injects the skill's body once: hidden, right after the user's message, seen by every later call and turn exactly once", async () => {
    const root = setupRoot();
    const { client, calls } = await skillsClient({ root, script: callOnce("/report-writing", "write_report") });
    await client.chat("/report-writing on fusion power", { threadId: "t1" });
    expect(calls()).toHaveLength(2);
    for (const call of calls()) expect(countText(call.messages, "REPORT-BODY-MARKER")).toBe(1);
    // Placed directly after the user's message, marked hidden.
    const first = calls()[0]?.messages ?? [];
    const at = first.findIndex((m) => String(m.content).includes("REPORT-BODY-MARKER"));
    expect(String(first[at - 1]?.content)).toBe("/report-writing on fusion power");
    expect(first[at]?.additional_kwargs?.hide_from_ui).toBe(true);

    await client.chat("thanks, shorter please", { threadId: "t1" });
    expect(calls()).toHaveLength(3);
    expect(countText(calls()[2]?.messages ?? [], "REPORT-BODY-MARKER")).toBe(1);
    const state = await client.getThread("t1");
    const copies = state.messages.filter((m) => JSON.stringify(m.content).includes("REPORT-BODY-MARKER"));
    expect(copies).toHaveLength(1);
    expect(copies[0]?.additional_kwargs?.hide_from_ui).toBe(true);
  });

  it("ignores reserved slash words, unknown names and disabled skills", async () => {
    const root = setupRoot();
    const { client, calls } = await skillsClient({ root, script: () => ({ text: "ok" }) });
    skillsOf(client).updateSkill("source-evaluation", { enabled: false });
    for (const text of ["/help me", "/no-such-skill go", "/source-evaluation of this", "not /report-writing at the start"]) {
      await client.chat(text, { threadId: `t-${calls().length}` });
    }
    for (const call of calls()) {
      expect(countText(call.messages, "BODY-MARKER")).toBe(0);
    }
  });
});

describe("allowed-tools policy", () => {
  it("offers only the skill's tools plus framework tools while it is active", async () => {
    const root = setupRoot();
    const { client, calls } = await skillsClient({ root, script: () => ({ text: "ok" }) });
    await client.chat("no skill", { threadId: "t1" });
    await client.chat("/report-writing now", { threadId: "t2" });
    expect(calls()[0]?.tools).toEqual(expect.arrayContaining(["web_lookup", "wipe_disk", "write_report"]));
    expect(calls()[1]?.tools).toContain("write_report");
    expect(calls()[1]?.tools).toContain("web_lookup");
    expect(calls()[1]?.tools).toContain("present_files");
    expect(calls()[1]?.tools).not.toContain("wipe_disk");
  });

  it("refuses a forbidden call the model makes anyway: the tool does not run and the error names the skill", async () => {
    const root = setupRoot();
    const { client, calls, runs } = await skillsClient({ root, script: callOnce("/report-writing", "wipe_disk") });
    await client.chat("/report-writing and also wipe the disk", { threadId: "t1" });
    expect(runs.wipe_disk).toBe(0);
    const refusal = toolMessages(calls()[1]?.messages ?? [])[0];
    expect(refusal?.status).toBe("error");
    expect(String(refusal?.content)).toContain('the tool "wipe_disk" is not allowed while the skill "report-writing" is active');
    expect(String(refusal?.content)).toContain("allows only: write_report, web_lookup");
  });

  it("lets the same call run when no skill is active, and the policy ends with the turn", async () => {
    const root = setupRoot();
    const { client, runs } = await skillsClient({ root, script: callOnce("wipe", "wipe_disk") });
    await client.chat("please wipe", { threadId: "t1" });
    expect(runs.wipe_disk).toBe(1);
    await client.chat("/report-writing then wipe", { threadId: "t1" });
    expect(runs.wipe_disk).toBe(1);
    await client.chat("now wipe again", { threadId: "t1" });
    expect(runs.wipe_disk).toBe(2);
  });

  it("keeps the policy it was started with for the whole turn, even if the skill is removed meanwhile", async () => {
    const root = setupRoot();
    const script: ScriptFunction = (messages) => {
      if (answered(messages)) return { text: "done" };
      rmSync(join(root, "skills", "public", "report-writing"), { recursive: true, force: true });
      return { toolCalls: [{ name: "wipe_disk", args: { q: "x" } }] };
    };
    const { client, runs } = await skillsClient({ root, script });
    await client.chat("/report-writing go", { threadId: "t1" });
    expect(runs.wipe_disk).toBe(0);
  });

  it("allows the skill's own tools while active", async () => {
    const root = setupRoot();
    const { client, runs } = await skillsClient({ root, script: callOnce("/report-writing", "write_report") });
    await client.chat("/report-writing go", { threadId: "t1" });
    expect(runs.write_report).toBe(1);
  });
});

describe("skill changes", () => {
  it("drop the open clients' cached agents, so the next turn runs on a freshly built agent", async () => {
    const root = setupRoot();
    const counter = agentBuilds();
    const { client } = await skillsClient({ root, script: () => ({ text: "ok" }), plugins: [counter.plugin] });
    await client.chat("hello", { threadId: "t1" });
    await client.chat("hello", { threadId: "t2" });
    // Cached: a second turn with nothing changed reuses the agent.
    expect(counter.builds()).toBe(1);
    skillsOf(client).updateSkill("report-writing", { enabled: false });
    await client.chat("hello", { threadId: "t3" });
    expect(counter.builds()).toBe(2);
    skillsOf(client).reloadSkills();
    await client.chat("hello", { threadId: "t4" });
    expect(counter.builds()).toBe(3);
    await client.chat("hello", { threadId: "t5" });
    expect(counter.builds()).toBe(3);
  });
});

describe("custom agents", () => {
  it("an agent's skills allowlist limits what is listed and what /skill-name can activate", async () => {
    const root = setupRoot();
    const { client, calls } = await skillsClient({ root, script: () => ({ text: "ok" }) });
    const agentDir = join(root, ".antler", "users", "default", "agents", "scout");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "SOUL.md"), "You are Scout.");
    writeFileSync(join(agentDir, "config.yaml"), "description: scout\nskills: [source-evaluation]\n");
    await client.chat("/report-writing please", { threadId: "t1", agent: "scout" });
    const prompt = systemText(calls()[0]);
    expect(prompt).toContain("<name>source-evaluation</name>");
    expect(prompt).not.toContain("report-writing</name>");
    expect(countText(calls()[0]?.messages ?? [], "REPORT-BODY-MARKER")).toBe(0);
    await client.chat("/source-evaluation of this", { threadId: "t2", agent: "scout" });
    expect(countText(calls()[1]?.messages ?? [], "SOURCES-BODY-MARKER")).toBe(1);
    // Without the agent, both are there.
    await client.chat("hello", { threadId: "t3" });
    expect(systemText(calls()[2])).toContain("<name>report-writing</name>");
  });
});
