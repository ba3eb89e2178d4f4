import { join } from "node:path";
import { PassThrough } from "node:stream";
import { main } from "@antler/kernel/cli";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import { AntlerClient } from "../src/client/client.js";
import { tempDir, writeFiles } from "./fixtures.js";

const PROMPT = "Write notes.md with a greeting and show it to me";
const TOOLS = `export default ({ definePlugin, defineTool, z, threadPaths, resolveVirtualPath }) => definePlugin({
  name: "notes", version: "1.0.0", kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(defineTool({ name: "write_note", description: "Write a note into outputs.", schema: z.object({ name: z.string(), text: z.string() }),
      async run({ name, text }, rt) {
        const fs = await import("node:fs/promises");
        await fs.mkdir(threadPaths(ctx.paths.baseDir, rt.context.user_id ?? "default", rt.context.thread_id).outputs, { recursive: true });
        const host = resolveVirtualPath(threadPaths(ctx.paths.baseDir, rt.context.user_id ?? "default", rt.context.thread_id), "/mnt/user-data/outputs/" + name, ["outputs"]);
        await fs.writeFile(host, text);
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

describe("antler run", () => {
  it("streams text, each tool call with its outcome, and the presented files", async () => {
    const dir = tempDir();
    writeFiles(dir, { "notes.mjs": TOOLS, "record.yaml": config("record"), "config.yaml": config("replay") });
    // Record a cassette for this exact distribution from a scripted session, then replay it through the CLI.
    const recorder = await AntlerClient.create({
      configPath: join(dir, "record.yaml"),
      plugins: [
        scriptedModelsPlugin({
          scripted: [
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
        }),
      ],
      env: {},
    });
    await recorder.chat(PROMPT, { threadId: "recording" });
    await recorder.close();

    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = "";
    let err = "";
    stdout.on("data", (c) => (out += c));
    stderr.on("data", (c) => (err += c));
    const code = await main(["run", PROMPT, "--thread", "cli-thread"], { stdout, stderr, cwd: dir, env: {} });
    expect(err).toMatch(/thread cli-thread · trace [0-9a-f]{32}/);
    expect(code).toBe(0);
    expect(out).toContain("On it.");
    expect(out).toContain('✓ write_note({"name":"notes.md","text":"# Hello"})');
    expect(out).toMatch(
      /✗ write_note\(\{"name":"\.\.\/escape\.md","text":"x"\}\): Error: write_note failed: path ".*escape\.md" is outside/,
    );
    expect(out).toContain("Done: notes.md is ready.");
    expect(out).toMatch(
      /Presented files:\n {2}\/mnt\/user-data\/outputs\/notes\.md {2}→ {2}.*users\/default\/threads\/cli-thread\/user-data\/outputs\/notes\.md/,
    );
  });

  it("asks for a prompt when none is given", async () => {
    const stderr = new PassThrough();
    let err = "";
    stderr.on("data", (c) => (err += c));
    expect(await main(["run"], { stdout: new PassThrough(), stderr, cwd: tempDir(), env: {} })).toBe(2);
    expect(err).toContain("give a prompt");
  });
});
