import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CodePlugin, definePlugin, type KernelConfigInput } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { type Script, type ScriptedCall, scriptedModelsPlugin, useTempDirs } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import { type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { afterEach } from "vitest";
import { z } from "zod";
import skillsPlugin from "../src/index.js";

export const temp = useTempDirs();

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

export const REPORT_SKILL = `---
name: report-writing
description: Write a structured research report with sources.
allowed-tools: [write_report, web_lookup]
---

# Report writing

REPORT-BODY-MARKER: outline first, then sections, then a sources list.
`;

export const SOURCES_SKILL = `---
name: source-evaluation
description: Judge how far a source can be trusted.
---

SOURCES-BODY-MARKER: check the author, the date and the evidence.
`;

/** Writes `skills/public/<name>/SKILL.md` under `root` (the config folder) for each skill text. */
export function writePublicSkills(root: string, skills: Record<string, string>): void {
  for (const [name, text] of Object.entries(skills)) {
    mkdirSync(join(root, "skills", "public", name), { recursive: true });
    writeFileSync(join(root, "skills", "public", name, "SKILL.md"), text);
  }
}

/** Tools that count their runs, so a test can tell whether a refused call ran anyway. */
export function countingTools() {
  const runs: Record<string, number> = { write_report: 0, web_lookup: 0, wipe_disk: 0 };
  const plugin = definePlugin({
    name: "counting-tools",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      for (const name of Object.keys(runs)) {
        ctx.tools.add(
          defineTool({
            name,
            description: `${name} for tests.`,
            schema: z.object({ q: z.string().optional() }),
            run: () => {
              runs[name] = (runs[name] ?? 0) + 1;
              return `${name} ran`;
            },
          }),
        );
      }
    },
  });
  return { plugin, runs };
}

export async function skillsClient(options: { script: Script; skills?: Record<string, unknown>; plugins?: CodePlugin[]; root?: string }) {
  const root = options.root ?? temp.tempDir("antler-skills-");
  const scripted = scriptedModelsPlugin({ m: options.script });
  const tools = countingTools();
  const client = await AntlerClient.create({
    config: {
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "memory" },
      title: { enabled: false },
      ...(options.skills ? { skills: options.skills } : {}),
    } as KernelConfigInput,
    plugins: [scripted, tools.plugin, skillsPlugin, ...(options.plugins ?? [])],
    cwd: root,
    env: {},
    discover: false,
  });
  clients.push(client);
  const calls = (): ScriptedCall[] => scripted.models.get("m")?.calls ?? [];
  return { client, calls, runs: tools.runs, root };
}

export const systemText = (call: ScriptedCall | undefined): string => {
  const first = call?.messages[0];
  return SystemMessage.isInstance(first) ? first.text : "";
};

export const lastHumanText = (messages: BaseMessage[]): string =>
  String([...messages].reverse().find((m) => HumanMessage.isInstance(m) && m.additional_kwargs?.hide_from_ui !== true)?.content ?? "");

export const answered = (messages: BaseMessage[]) => ToolMessage.isInstance(messages.at(-1));

export const countText = (messages: BaseMessage[], needle: string): number =>
  messages.filter((m) => typeof m.content === "string" && m.content.includes(needle)).length;
