import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli } from "../src/testing/index.js";
import { tempDir, writeFiles } from "./fixtures.js";

// Every command of two real distributions (the demo and the multi-process deployment, which between them load
// the runtime, MCP, sandbox, web tools, subagents, batch, scheduler and gateway plugins) answers --help.

const examples = resolve(dirname(fileURLToPath(import.meta.url)), "../../../examples");
const DEPLOYMENT_ENV = {
  ANTLER_PG_URL: "postgres://antler:secret@db.internal:5432/antler",
  OPENAI_API_KEY: "sk-test-not-a-real-key",
  ANTLER_KEY_ALICE: "alice-0123456789abcdef0123",
  ANTLER_KEY_BOB: "bob-0123456789abcdef012345",
};

async function cli(args: string[], cwd: string, env: Record<string, string> = {}) {
  const { code, out, err } = await runCli(args, { cwd, env: { RESEARCH_ASSISTANT_DIR: cwd, ...env } });
  // Kernel log lines (JSON, e.g. the demo's host-bash warning at boot) are not the command's own output.
  return { code, out, err: err.replace(/^\{.*\}\n/gm, "") };
}

/** The command names `antler --help` lists for a config. */
async function listedCommands(cwd: string, env: Record<string, string> = {}): Promise<string[]> {
  const { out } = await cli(["--help"], cwd, env);
  const section = out.slice(out.indexOf("Commands:"), out.indexOf("Options:"));
  return section
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s{2,}/)[0] ?? "")
    .filter(Boolean);
}

describe("antler <command> --help", () => {
  it.each([
    { name: "research-assistant", dir: join(examples, "research-assistant"), env: {}, expected: ["run", "mcp status", "agents list"] },
    { name: "deployment", dir: join(examples, "deployment"), env: DEPLOYMENT_ENV, expected: ["serve", "worker", "schedule add"] },
  ])(
    "every command of the $name distribution prints its usage and exits 0, with -h as well",
    async ({ dir, env, expected }) => {
      const commands = await listedCommands(dir, env);
      expect(commands).toEqual(expect.arrayContaining(["config check", "plugins list", ...expected]));
      // One process per command and flag; a few at a time, so a distribution with many commands stays quick.
      const cases = commands.flatMap((command) => ["--help", "-h"].map((flag) => ({ command, flag })));
      for (let at = 0; at < cases.length; at += 4) {
        await Promise.all(
          cases.slice(at, at + 4).map(async ({ command, flag }) => {
            const { code, out, err } = await cli([...command.split(" "), flag], dir, env);
            expect({ command, flag, code, err }).toEqual({ command, flag, code: 0, err: "" });
            expect(out).toMatch(new RegExp(`^Usage: antler ${command}\\b`));
          }),
        );
      }
    },
    120_000,
  );

  it("an unknown option is a one-line error with the usage and exit 2, never a stack trace", async () => {
    const dir = join(examples, "research-assistant");
    const { code, err } = await cli(["run", "--bogus", "hi"], dir);
    expect(code).toBe(2);
    expect(err).toMatch(/^antler run: Unknown option '--bogus'.*\nUsage: antler run /);
    expect(err).not.toContain("    at ");
  });

  it("options may come before the command words, and an unknown command names only its words", async () => {
    const dir = tempDir();
    writeFiles(dir, { "custom.yaml": "logging: { level: warn }\n" });
    const check = await cli(["--config", join(dir, "custom.yaml"), "config", "check"], dir);
    expect(check.code).toBe(0);
    expect(check.out).toContain(join(dir, "custom.yaml"));
    const unknown = await cli(["quota", "--config", join(dir, "custom.yaml")], dir);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('unknown command "quota"');
  });

  it.each([
    { group: "config", args: ["config", "--help"], commands: ["config check", "config schema"] },
    { group: "plugins", args: ["plugins", "-h"], commands: ["plugins list"] },
    { group: "agents", args: ["agents", "--help"], commands: ["agents list"] },
  ])("a command group with --help ($group) lists its commands and exits 0", async ({ group, args, commands }) => {
    const { code, out, err } = await cli(args, join(examples, "research-assistant"));
    expect({ code, err }).toEqual({ code: 0, err: "" });
    expect(out).toMatch(new RegExp(`^Usage: antler ${group} <command> \\[options\\]`));
    for (const command of commands) expect(out).toMatch(new RegExp(`^  ${command}\\s`, "m"));
    expect(out).not.toMatch(/^ {2}run\s/m);
  });

  it("a command group without a command lists its commands on stderr and exits 2", async () => {
    const { code, out, err } = await cli(["config"], join(examples, "research-assistant"));
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toMatch(/^antler config: name one of its commands\n\nUsage: antler config <command>/);
    expect(err).toMatch(/^ {2}config check\s/m);
  });
});
