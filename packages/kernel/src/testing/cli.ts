import { PassThrough } from "node:stream";
import { type CliEnvironment, main, runCommand } from "../cli/main.js";
import { isAntlerError } from "../errors.js";
import type { Kernel } from "../plugin.js";

/**
 * Runs `antler <args>` in this process, as the CLI binary would, and returns the exit code and what it wrote.
 * `env` defaults to an empty environment, so a developer's variables never leak into a test.
 */
export async function runCli(
  args: readonly string[],
  environment: CliEnvironment = {},
): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (chunk) => (out += chunk));
  stderr.on("data", (chunk) => (err += chunk));
  const code = await main(args, { env: {}, ...environment, stdout, stderr });
  return { code, out, err };
}

/**
 * Runs one of `kernel`'s commands (`argv` starts with its words, the longest match wins) the way the CLI does:
 * an AntlerError becomes `✖ message` on stderr and exit code 1. For testing a plugin's commands on a kernel the
 * test already holds, without booting another from config.
 */
export async function runKernelCommand(
  kernel: Kernel,
  argv: readonly string[],
  options: { cwd?: string; env?: Readonly<Record<string, string | undefined>> } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const words = (c: { name: string }) => c.name.split(" ");
  const command = [...kernel.commands]
    .sort((a, b) => words(b).length - words(a).length)
    .find((c) => words(c).every((w, i) => argv[i] === w));
  if (!command) throw new Error(`no command for ${argv.join(" ")}`);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (chunk) => (out += chunk));
  stderr.on("data", (chunk) => (err += chunk));
  let code: number;
  try {
    // As the CLI runs it: --help, and a declared command's options parsed and checked (exit 2 when they are wrong).
    code = await runCommand(command, argv.slice(words(command).length), {
      stdout,
      stderr,
      cwd: options.cwd ?? process.cwd(),
      env: options.env ?? {},
      kernel,
    });
  } catch (error) {
    if (!isAntlerError(error)) throw error;
    stderr.write(`✖ ${error.message}\n`);
    code = 1;
  }
  return { code, stdout: out, stderr: err };
}
