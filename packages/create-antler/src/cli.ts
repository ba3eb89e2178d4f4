import { relative } from "node:path";
import { CREATE_HELP, type CreateOptions, parseCreateArgs } from "./args.js";
import { renderProject, runInstall, targetProblem, writeProject } from "./create.js";
import { AGENT_NAME } from "./template.js";

export interface CreateIO {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Runs the install; default: the package manager as a child process with the terminal attached. */
  install?: (options: CreateOptions) => Promise<number>;
}

const line = (stream: NodeJS.WritableStream, text: string) => stream.write(`${text}\n`);

/** `create-antler <dir> [options]`: returns the exit code (0 created, 1 install failed, 2 bad input). */
export async function main(
  argv: readonly string[],
  io: CreateIO = { cwd: process.cwd(), env: process.env, stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const parsed = parseCreateArgs(argv, io);
  if (parsed.kind === "help") {
    line(io.stdout, CREATE_HELP);
    return 0;
  }
  if (parsed.kind === "error") {
    line(io.stderr, `create-antler: ${parsed.message}`);
    return 2;
  }
  const { options } = parsed;
  const problem = targetProblem(options.dir);
  if (problem) {
    line(io.stderr, `create-antler: ${problem}`);
    return 2;
  }
  let files: Record<string, string>;
  try {
    files = renderProject(options);
  } catch (error) {
    line(io.stderr, `create-antler: ${(error as Error).message}`);
    return 2;
  }
  writeProject(options.dir, files);
  line(io.stdout, `Created ${options.name} in ${options.dir}`);

  const pm = options.packageManager;
  const where = relative(io.cwd, options.dir) || ".";
  const cd = where === "." ? [] : [`cd ${/\s/.test(where) ? JSON.stringify(where) : where}`];
  if (options.install) {
    line(io.stdout, `\nInstalling dependencies with ${pm} install ...`);
    const code = await (io.install ?? ((o) => runInstall(o.packageManager, o.dir)))(options);
    if (code !== 0) {
      line(
        io.stderr,
        `create-antler: ${pm} install failed (exit ${code}); the files are written. Fix the cause above, then run: ${[...cd, `${pm} install`].join(" && ")}`,
      );
      return 1;
    }
  }
  const steps = [...cd, ...(options.install ? [] : [`${pm} install`])];
  line(io.stdout, "\nNext:");
  for (const step of steps) line(io.stdout, `  ${step}`);
  line(io.stdout, `  ${pm} start     # one offline turn: the ${AGENT_NAME} agent calls the units plugin's tool`);
  line(io.stdout, `  ${pm} test      # the plugin conformance suite and real turns on the scripted model`);
  line(io.stdout, "\nREADME.md says how to point config.yaml at a real model.");
  return 0;
}
