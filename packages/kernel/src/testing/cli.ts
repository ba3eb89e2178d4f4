import { PassThrough } from "node:stream";
import { type CliEnvironment, main } from "../cli/main.js";

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
