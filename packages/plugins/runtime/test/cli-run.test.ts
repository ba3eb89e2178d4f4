import { createWriteStream, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "@antler/kernel/cli";
import { runCli, type ScriptedStep, scriptedModelsPlugin } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import { AntlerClient } from "../src/client/client.js";
import { tempDir, writeFiles } from "./fixtures.js";

const PROMPT = "Write notes.md with a greeting and show it to me";
const TOOLS = `export default ({ definePlugin, defineTool, z, threadPaths, resolveVirtualPath, emitCustomEvent }) => definePlugin({
  name: "notes", version: "1.0.0", kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(defineTool({ name: "write_note", description: "Write a note into outputs.", schema: z.object({ name: z.string(), text: z.string() }),
      async run({ name, text }, rt) {
        const fs = await import("node:fs/promises");
        await fs.mkdir(threadPaths(ctx.paths.baseDir, rt.context.user_id ?? "default", rt.context.thread_id).outputs, { recursive: true });
        const host = resolveVirtualPath(threadPaths(ctx.paths.baseDir, rt.context.user_id ?? "default", rt.context.thread_id), "/mnt/user-data/outputs/" + name, ["outputs"]);
        await fs.writeFile(host, text);
        ctx.logger.info({ note: name }, "note written");
        await emitCustomEvent({ type: "note_written", name }, rt);
        return "wrote /mnt/user-data/outputs/" + name;
      } }));
  },
});`;

function config(mode: "record" | "replay") {
  const models =
    mode === "record"
      ? "  - { name: scripted, provider: scripted }\n  - { name: m, provider: cassette, options: { path: ./turn.jsonl, mode: record, record_from: scripted } }\n"
      : "  - { name: m, provider: cassette, options: { path: ./turn.jsonl } }\n";
  return `default_model: m\nlogging: { level: warn }\ntitle: { enabled: false }\nmodels:\n${models}plugins:\n  - path: ./notes.mjs\n`;
}

/** A distribution in a temp dir whose model replays a cassette recorded here from `script` (one chat of `prompt`). */
async function recordedDistribution(script: ScriptedStep[], prompt: string): Promise<string> {
  const dir = tempDir();
  writeFiles(dir, { "notes.mjs": TOOLS, "record.yaml": config("record"), "config.yaml": config("replay") });
  const recorder = await AntlerClient.create({
    configPath: join(dir, "record.yaml"),
    plugins: [scriptedModelsPlugin({ scripted: script })],
    env: {},
  });
  await recorder.chat(prompt, { threadId: "recording" });
  await recorder.close();
  return dir;
}

describe("antler run", () => {
  it("streams text, each tool call with its outcome, and the presented files", async () => {
    // Record a cassette for this exact distribution from a scripted session, then replay it through the CLI.
    const dir = await recordedDistribution(
      [
        { id: "r0", text: "On it.", toolCalls: [{ name: "write_note", args: { name: "notes.md", text: "# Hello" } }] },
        {
          id: "r1",
          toolCalls: [
            { name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/notes.md"] } },
            { name: "write_note", args: { name: "../escape.md", text: "x" } },
          ],
        },
        { id: "r2", text: "Done: notes.md is ready." },
      ],
      PROMPT,
    );
    const { code, out, err } = await runCli(["run", PROMPT, "--thread", "cli-thread"], { cwd: dir });
    expect(err).toMatch(/thread cli-thread · trace [0-9a-f]{32}/);
    expect(code).toBe(0);
    expect(out).toContain("On it.");
    expect(out).toContain('✓ write_note({"name":"notes.md","text":"# Hello"})');
    expect(out).toMatch(
      /✗ write_note\(\{"name":"\.\.\/escape\.md","text":"x"\}\): Error: write_note failed: path ".*escape\.md" is outside/,
    );
    expect(out).toContain("Done: notes.md is ready.");
    // Quiet by default: no custom events, no plugin info logs.
    expect(out).not.toContain("note_written");
    expect(err).not.toContain("note written");
    expect(out).toMatch(
      /Presented files:\n {2}\/mnt\/user-data\/outputs\/notes\.md {2}→ {2}.*users\/default\/threads\/cli-thread\/user-data\/outputs\/notes\.md/,
    );
  });

  it("--events prints custom events and -v shows plugins' info logs", async () => {
    const dir = await recordedDistribution(
      [{ toolCalls: [{ name: "write_note", args: { name: "n.md", text: "x" } }] }, { text: "Done." }],
      "note please",
    );
    const { code, out, err } = await runCli(["run", "note please", "--events", "-v"], { cwd: dir });
    expect(code).toBe(0);
    expect(out).toContain(`· event {"type":"note_written","name":"n.md"}`);
    expect(err).toContain('"msg":"note written"');
  });

  it("-v on a terminal shared with the answer: each log line starts its own line, never glued to a tool's spinner", async () => {
    const dir = await recordedDistribution(
      [{ text: "Writing it", toolCalls: [{ name: "write_note", args: { name: "n.md", text: "x" } }] }, { text: "Done." }],
      "note please",
    );
    // Two descriptors of one file, as a terminal's stdout and stderr are two descriptors of one device.
    const shared = join(dir, "terminal.txt");
    const stdout = Object.assign(createWriteStream("", { fd: openSync(shared, "a") }), { isTTY: true });
    const stderr = createWriteStream("", { fd: openSync(shared, "a") });
    const code = await main(["run", "note please", "-v"], { cwd: dir, env: {}, stdout, stderr });
    await Promise.all([stdout, stderr].map((s) => new Promise((r) => s.end(r))));
    expect(code).toBe(0);
    // What a terminal shows: lines, each redrawn from the start after "\r\x1b[2K".
    const clearLine = "\r\u001b[2K";
    const shown = readFileSync(shared, "utf8").replaceAll(clearLine, "\n").split("\n");
    const logLines = shown.filter((line) => line.includes('"msg":"note written"'));
    expect(logLines).toHaveLength(1);
    expect(logLines[0]?.startsWith("{")).toBe(true);
    expect(shown).toContain("Writing it");
    expect(shown.some((line) => line.startsWith("Done."))).toBe(true);
  });

  it("asks for a prompt when none is given", async () => {
    const { code, err } = await runCli(["run"], { cwd: tempDir() });
    expect(code).toBe(2);
    expect(err).toContain("give a prompt");
  });
});

describe("antler agents", () => {
  const cli = (args: string[], cwd: string) => runCli(args, { cwd });
  const CONFIG = "logging: { level: warn }\nmodels:\n  - { name: m, provider: cassette, options: { path: ./none.jsonl } }\n";

  it("lists, shows and removes a user's agents, and shows shipped agents without letting them be removed", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "config.yaml": CONFIG,
      "agents/editor/SOUL.md": "You are the house editor.\n",
      "agents/editor/config.yaml": "description: Edits drafts\n",
      ".antler/users/default/agents/quill/SOUL.md": "You are Quill.\n",
      ".antler/users/default/agents/quill/config.yaml": "description: Research helper\ntool_groups: [web]\nthinking: false\n",
    });
    const list = await cli(["agents", "list"], dir);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/quill\s+user\s+-\s+Research helper/);
    expect(list.out).toMatch(/editor\s+shared\s+-\s+Edits drafts/);
    const show = await cli(["agents", "show", "quill", "--json"], dir);
    expect(JSON.parse(show.out)).toMatchObject({
      name: "quill",
      tool_groups: ["web"],
      thinking: false,
      soul: "You are Quill.\n",
      scope: "user",
    });
    expect((await cli(["agents", "show", "quill"], dir)).out).toContain("thinking: off\n");
    expect((await cli(["agents", "show", "editor"], dir)).out).toContain("thinking: on (default)\n");
    expect((await cli(["agents", "rm", "quill"], dir)).out).toContain("Deleted agent quill.");
    expect((await cli(["agents", "list", "--user", "bob"], dir)).out).not.toContain("quill");
    const shipped = await cli(["agents", "rm", "editor"], dir);
    expect(shipped.code).not.toBe(0);
    expect(shipped.err).toContain("ships with the distribution");
  });

  it("run --agent with an unknown agent fails before any model call and says how to list agents", async () => {
    const dir = tempDir();
    writeFiles(dir, { "config.yaml": CONFIG });
    const { code, err } = await cli(["run", "hello", "--agent", "nobody"], dir);
    expect(code).not.toBe(0);
    expect(err).toContain('custom agent "nobody" not found');
    expect(err).toContain("antler agents list");
  });
});
