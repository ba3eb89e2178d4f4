import { join } from "node:path";
import type { CodePlugin } from "@antler/kernel";
import { type ScriptFunction, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import sandboxPlugin from "@antler/plugin-sandbox";
import aioSandboxPlugin from "@antler/sandbox-aio";
import localPlugin from "@antler/sandbox-local";
import type { ToolMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { FakeAioServer } from "../../../sandbox-providers/aio/test/fake-aio-server.js";
import skillsPlugin, { skillsOf } from "../src/index.js";
import { goodArchive } from "./archives.js";
import { answered, lastHumanText, REPORT_SKILL, temp, writePublicSkills } from "./fixtures.js";

const clients: AntlerClient[] = [];
const servers: FakeAioServer[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const s of servers.splice(0)) await s.close();
});

/** "read <path>" calls read_file; "write <path>" calls write_file; the answer is the tool's result. */
const fileScript: ScriptFunction = (messages) => {
  const last = messages.at(-1);
  if (answered(messages)) return { text: String((last as ToolMessage).content) };
  const [verb, path] = lastHumanText(messages).split(" ");
  if (verb === "read") return { toolCalls: [{ name: "read_file", args: { description: "read it", path } }] };
  return { toolCalls: [{ name: "write_file", args: { description: "write it", path, content: "overwritten" } }] };
};

type Setup = {
  name: string;
  plugins: () => Promise<CodePlugin[]>;
  sandbox: Record<string, unknown>;
};

const setups: Setup[] = [
  { name: "the local provider", plugins: async () => [localPlugin], sandbox: {} },
  {
    name: "the AIO provider over loopback (provisioner + AIO API)",
    plugins: async () => {
      const server = await FakeAioServer.start();
      servers.push(server);
      return [{ plugin: aioSandboxPlugin, config: { provisioner_url: server.url, acquire_timeout_seconds: 20 } }];
    },
    sandbox: { provider: "aio" },
  },
];

describe.each(setups)("skills in the sandbox of $name", (setup) => {
  it("shows public skills and the user's own custom skills read-only under /mnt/skills, and nobody else's", async () => {
    const root = temp.tempDir("antler-skills-sandbox-");
    writePublicSkills(root, { "report-writing": REPORT_SKILL });
    const client = await AntlerClient.create({
      config: {
        models: [{ name: "m", provider: "scripted" }],
        storage: { backend: "memory" },
        title: { enabled: false },
        logging: { level: "warn" },
        sandbox: setup.sandbox as never,
      },
      plugins: [scriptedModelsPlugin({ m: fileScript }), ...(await setup.plugins()), sandboxPlugin, skillsPlugin],
      cwd: root,
      env: {},
      discover: false,
    });
    clients.push(client);
    await skillsOf(client).installSkill(goodArchive(), { userId: "alice" });

    const ask = (text: string, userId: string) => client.chat(text, { userId, threadId: `t-${Math.random().toString(36).slice(2)}` });
    expect(await ask("read /mnt/skills/public/report-writing/SKILL.md", "alice")).toContain("REPORT-BODY-MARKER");
    expect(await ask("read /mnt/skills/custom/tidy-notes/SKILL.md", "alice")).toContain("Tidy notes");
    expect(await ask("read /mnt/skills/custom/tidy-notes/templates/summary.md", "alice")).toContain("# Summary");
    // Bob sees the public skills, but alice's custom skill is not in his /mnt/skills/custom.
    expect(await ask("read /mnt/skills/public/report-writing/SKILL.md", "bob")).toContain("REPORT-BODY-MARKER");
    expect(await ask("read /mnt/skills/custom/tidy-notes/SKILL.md", "bob")).toMatch(/not found|does not exist|no such file/i);

    // Writes are refused under both mounts, and the files stay as they were.
    expect(await ask("write /mnt/skills/custom/tidy-notes/SKILL.md", "alice")).toMatch(/read-only/);
    expect(await ask("write /mnt/skills/public/report-writing/SKILL.md", "alice")).toMatch(/read-only/);
    expect(skillsOf(client).getSkill("tidy-notes", { userId: "alice" }).body).toContain("Tidy notes");
    expect(skillsOf(client).getSkill("report-writing", { userId: "alice" }).body).toContain("REPORT-BODY-MARKER");
    expect(join(root, "skills", "public")).toBe(skillsOf(client).catalog.publicDir);
  });
});
