import { spawn } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir, writeFiles } from "./fixtures.js";

// A plugin command that declares its options and positionals, run through the real `antler` binary (the built CLI,
// in a child process): --help is written from the declaration, bad input exits 2 before `run` with what is
// allowed, and a good call reaches `run` with typed values. A raw-args command next to it keeps its raw words.

const bin = resolve(dirname(fileURLToPath(import.meta.url)), "../bin/antler.js");

const PLUGIN = `export default ({ definePlugin }) => definePlugin({
  name: "greeter", version: "1.0.0", kernel: "^0.1.0",
  setup(ctx) {
    ctx.commands.add({
      name: "greet",
      summary: "Greet someone.",
      positionals: [{ name: "who", required: true, description: "Whom to greet." }],
      options: {
        times: { type: "integer", default: 1, placeholder: "n", description: "How many times." },
        style: { choices: ["plain", "loud"], default: "plain" },
        dry: { type: "boolean", short: "n", description: "Print nothing." },
      },
      run(args, io) {
        io.stdout.write(JSON.stringify({ options: io.options, positionals: io.positionals }) + "\\n");
        return 0;
      },
    });
    ctx.commands.add({ name: "echo", summary: "Print the raw words.", run(args, io) { io.stdout.write(JSON.stringify(args) + "\\n"); return 0; } });
  },
});`;

function antler(args: string[], cwd: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (err += chunk));
    child.on("error", fail);
    child.on("close", (code) => done({ code, out, err }));
  });
}

function distribution(): string {
  const dir = tempDir();
  writeFiles(dir, {
    "greeter.js": PLUGIN,
    "package.json": '{"type":"module"}',
    "config.yaml": "preset: none\nplugins:\n  - path: ./greeter.js\n",
  });
  return dir;
}

describe("a plugin command with declared options, through the antler binary", () => {
  it("--help prints the usage written from the declaration and exits 0", async () => {
    const { code, out, err } = await antler(["greet", "--help"], distribution());
    expect({ code, err }).toEqual({ code: 0, err: "" });
    expect(out).toMatch(/^Usage: antler greet <who> \[--times <n>\] \[--style <plain\|loud>\] \[-n, --dry\]\n\nGreet someone\.\n/);
    expect(out).toMatch(/^ {2}who\s+Whom to greet\.$/m);
    expect(out).toMatch(/^ {2}--times <n>\s+How many times\. \(default: 1\)$/m);
    expect(out).toMatch(/^ {2}-n, --dry\s+Print nothing\.$/m);
  });

  it("an unknown option exits 2 naming it, the closest declared one and every allowed one; run never starts", async () => {
    const { code, out, err } = await antler(["greet", "bob", "--tmes", "2"], distribution());
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toMatch(
      /^antler greet: unknown option --tmes \(did you mean --times\?\)\. Allowed: --times <n>, --style <plain\|loud>, --dry \(-n\), --config <path> \(-c\), --verbose \(-v\)\n/,
    );
    expect(err).toContain("\nUsage: antler greet <who>");
    expect(err).not.toContain("    at ");
  });

  it.each([
    { args: ["bob", "--times", "two"], message: '--times must be an integer, got "two"' },
    { args: ["bob", "--style", "shout"], message: '--style must be one of plain, loud; got "shout"' },
    { args: [], message: "missing <who>: Whom to greet." },
    { args: ["bob", "alice"], message: 'unexpected argument "alice": takes <who>' },
  ])("bad input ($message) exits 2 with that message and the usage", async ({ args, message }) => {
    const { code, out, err } = await antler(["greet", ...args], distribution());
    expect({ code, out }).toEqual({ code: 2, out: "" });
    expect(err.split("\n").slice(0, 2)).toEqual([`antler greet: ${message}`, expect.stringMatching(/^Usage: antler greet /)]);
  });

  it("a good call reaches run with typed values and defaults, options before or after the words", async () => {
    const dir = distribution();
    const first = await antler(["greet", "bob", "--times", "3", "-n"], dir);
    expect({ code: first.code, err: first.err }).toEqual({ code: 0, err: "" });
    expect(JSON.parse(first.out)).toEqual({ options: { times: 3, style: "plain", dry: true }, positionals: { who: "bob" } });
    const second = await antler(["--config", join(dir, "config.yaml"), "greet", "--style", "loud", "bob"], dir);
    expect(JSON.parse(second.out)).toEqual({ options: { times: 1, style: "loud" }, positionals: { who: "bob" } });
  });

  it("a command without a declaration still gets its raw words, unknown options included", async () => {
    const { code, out } = await antler(["echo", "--anything", "x"], distribution());
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual(["--anything", "x"]);
  });
});
