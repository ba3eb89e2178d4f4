import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { createKernel } from "../boot.js";
import { discoverConfigPath } from "../config/discover.js";
import { isAntlerError } from "../errors.js";
import type { CliCommand, CliIO, Kernel } from "../plugin.js";
import { presetPackages } from "../preset.js";
import { KERNEL_VERSION } from "../version.js";
import { CliUsageError, declaredUsage, parseDeclaredArgs } from "./options.js";

export interface CliEnvironment {
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  cwd?: string;
  env?: Readonly<Record<string, string | undefined>>;
}

/** What every command gets; a plugin command gets the booted kernel too, and its parsed options. */
type BaseIO = Omit<CliIO, "kernel" | "options" | "positionals">;

type KernelCommand = Required<Pick<CliCommand, "name" | "summary" | "usage">> & {
  run(args: string[], io: BaseIO): Promise<number>;
};

const write = (stream: NodeJS.WritableStream, text: string) => stream.write(text.endsWith("\n") ? text : `${text}\n`);

/** Boots a kernel from config (not started), runs `fn`, and always closes it. */
async function withKernel<T>(configPath: string | undefined, io: BaseIO, fn: (kernel: Kernel) => Promise<T>): Promise<T> {
  const kernel = await boot(configPath, io);
  try {
    return await fn(kernel);
  } finally {
    await kernel.close();
  }
}

/**
 * `withKernel` for the config commands, which parse each schema once: zod's compiled fast path would cost more to
 * build than it saves, so it is off while they run (zod loads with the config anyway).
 */
const inspect: typeof withKernel = async (configPath, io, fn) => {
  const { z } = await import("zod");
  const { jitless } = z.config();
  z.config({ jitless: true });
  try {
    return await withKernel(configPath, io, fn);
  } finally {
    z.config({ jitless });
  }
};

// CLI output goes to stdout; kernel logs (config.yaml's `logging:`) go to stderr, at warn unless it says more.
const boot = (configPath: string | undefined, io: BaseIO): Promise<Kernel> =>
  createKernel({ configPath, cwd: io.cwd, env: io.env, logDestination: io.stderr, defaultLogLevel: "warn" });

function takeConfigFlag(args: string[]): { configPath: string | undefined; rest: string[]; json: boolean } {
  const { values, positionals } = parseArgs({
    args,
    options: { config: { type: "string", short: "c" }, json: { type: "boolean" } },
    allowPositionals: true,
    strict: false,
  });
  return { configPath: typeof values.config === "string" ? values.config : undefined, rest: positionals, json: values.json === true };
}

/** Model, sandbox and storage providers are recorded as `kind:id`; the rest are DI tokens, whose names may hold colons too. */
const isProvider = (x: string) => /^(model|sandbox|storage):/.test(x);

const kernelCommands: KernelCommand[] = [
  {
    name: "config check",
    summary: "Validate config.yaml and every plugin's config; exit 1 with path, line and a suggestion when invalid.",
    usage: "antler config check [path]",
    async run(args, io) {
      const { configPath, rest } = takeConfigFlag(args);
      // Checking needs no agent runtime: tools are counted from what plugins declared, never built (no LangChain).
      return inspect(rest[0] ?? configPath, io, async (kernel) => {
        const tools = kernel.plugins.flatMap((p) => p.contributions.tools);
        const where = kernel.paths.configFile ?? "(embedded defaults: no config.yaml found)";
        const preset = kernel.plugins.filter((p) => p.origin.kind === "preset").length;
        write(
          io.stdout,
          `✓ ${where} is valid: ${kernel.plugins.length - preset} plugin(s) (+${preset} from the default preset), ${tools.length} tool(s), ${kernel.config.models.length} model(s)`,
        );
        return 0;
      });
    },
  },
  {
    name: "config schema",
    summary: "Print the JSON Schema of config.yaml, with the schemas of the configured plugins composed in.",
    usage: "antler config schema [--config path]",
    async run(args, io) {
      const { configPath } = takeConfigFlag(args);
      return inspect(configPath, io, async (kernel) => {
        write(io.stdout, JSON.stringify(kernel.configJsonSchema(), null, 2));
        return 0;
      });
    },
  },
  {
    name: "plugins list",
    summary:
      "List loaded plugins: name, version, source, dependencies, and the tools, middleware, providers, DI services, hook taps and commands each contributes.",
    usage: "antler plugins list [--config path] [--json]",
    async run(args, io) {
      const { configPath, json } = takeConfigFlag(args);
      return inspect(configPath, io, async (kernel) => {
        const rows = kernel.plugins.map((p) => ({
          name: p.name,
          version: p.version,
          source: p.origin.kind === "code" || p.origin.kind === "builtin" ? p.origin.kind : `${p.origin.kind}:${p.origin.spec}`,
          tools: [...p.contributions.tools],
          middleware: [...p.contributions.middlewares],
          providers: p.contributions.providers.filter(isProvider),
          services: p.contributions.providers.filter((x) => !isProvider(x)),
          hooks: [...p.contributions.hooks],
          commands: [...p.contributions.commands],
          depends_on: [...p.dependsOn],
        }));
        if (json) {
          write(io.stdout, JSON.stringify(rows, null, 2));
          return 0;
        }
        if (rows.length === 0) write(io.stdout, "No plugins loaded.");
        for (const r of rows) {
          write(io.stdout, `${r.name}@${r.version}  (${r.source})`);
          const list = (label: string, items: string[]) => items.length && write(io.stdout, `  ${label.padEnd(12)} ${items.join(", ")}`);
          for (const [label, items] of Object.entries(r).slice(3)) list(label.replace("_", " "), items as string[]);
        }
        return 0;
      });
    },
  },
];

function usage(extra: readonly CliCommand[]): string {
  const lines = ["Usage: antler <command> [options]", "", "Commands:"];
  for (const c of [...kernelCommands, ...extra]) lines.push(`  ${c.name.padEnd(18)} ${c.summary}`);
  lines.push("", "Options:", "  -c, --config <path>  config.yaml to use (default: $ANTLER_CONFIG, then ./config.yaml)");
  return lines.join("\n");
}

/**
 * The usage text, with the commands that the configured plugins contribute (`mcp status`, `serve`, ...). The
 * config is booted only to list them; when it cannot be booted, the kernel's own commands are listed with the
 * reason, so `--help` always answers.
 */
async function helpText(args: string[], io: BaseIO): Promise<string> {
  let configPath: string | undefined;
  try {
    configPath = discoverConfigPath({ explicit: takeConfigFlag(args).configPath, env: io.env, cwd: io.cwd }) ?? undefined;
  } catch (err) {
    return `${usage([])}\n\nPlugin commands are not listed: ${(err as Error).message}`;
  }
  if (!configPath) {
    return `${usage(presetCommands())}\n\nPlugin commands come from the default preset (no config.yaml found; pass --config to list a config's commands).`;
  }
  let kernel: Kernel | undefined;
  try {
    kernel = await boot(configPath, io);
    return `${usage(kernel.commands)}\n\nPlugin commands come from ${configPath}.`;
  } catch (err) {
    return `${usage([])}\n\nPlugin commands are not listed: ${configPath} did not load (${(err as Error).message.split("\n")[0]}). Run \`antler config check\` for details.`;
  } finally {
    await kernel?.close();
  }
}

/**
 * The commands the default preset contributes, read from each package's `antler.commands` manifest in its
 * package.json, so that `antler --help` without a config loads no plugin (nor zod, YAML or LangChain).
 */
function presetCommands(): CliCommand[] {
  const require = createRequire(import.meta.url);
  const commands: CliCommand[] = [];
  for (const spec of presetPackages({ storage: { backend: "sqlite", checkpointer: undefined } })) {
    let manifest: { antler?: { commands?: Array<{ name?: unknown; summary?: unknown }> } };
    try {
      manifest = JSON.parse(readFileSync(require.resolve(`${spec}/package.json`), "utf8"));
    } catch {
      continue; // not installed: `antler run` says so, with the fix
    }
    for (const c of manifest.antler?.commands ?? []) {
      if (typeof c.name === "string") commands.push({ name: c.name, summary: String(c.summary ?? ""), run: () => 2 });
    }
  }
  return commands;
}

/** Indexes of the words of `args` that are not options (nor the value of `--config`): the command's words come first. */
const wordsOf = (args: readonly string[]) =>
  args.flatMap((a, i) => (a.startsWith("-") || /^(-c|--config)$/.test(args[i - 1] ?? "") ? [] : [i]));

/** The longest command whose words lead `args` (options may come before or between them), and the other args (without `--config` for plugin commands: the kernel took it). */
function matchCommand<T extends { name: string }>(commands: readonly T[], args: readonly string[], dropConfig = false) {
  const at = wordsOf(args);
  let best: { command: T; length: number } | undefined;
  for (const command of commands) {
    const words = command.name.split(" ");
    if (words.every((w, i) => args[at[i] ?? -1] === w) && words.length > (best?.length ?? 0)) best = { command, length: words.length };
  }
  const config = dropConfig ? args.flatMap((a, i) => (/^(-c|--config)$/.test(a) ? [i, i + 1] : [])) : [];
  const taken = new Set([...at.slice(0, best?.length), ...config]);
  return best && { command: best.command, rest: args.filter((_, i) => !taken.has(i)) };
}

/**
 * `antler config --help` (a group's words without a command's): the group's commands, exit 0; without `--help`,
 * the same on stderr, exit 2. `undefined` when no command starts with those words.
 */
function groupHelp(commands: readonly CliCommand[], args: readonly string[], io: Pick<CliIO, "stdout" | "stderr">): number | undefined {
  const words = wordsOf(args).map((i) => args[i]);
  const members = commands.filter(
    (c) => words.length > 0 && words.every((w, i) => c.name.split(" ")[i] === w) && c.name.split(" ").length > words.length,
  );
  if (members.length === 0) return undefined;
  const lines = [
    `Usage: antler ${words.join(" ")} <command> [options]`,
    "",
    "Commands:",
    ...members.map((c) => `  ${c.name.padEnd(18)} ${c.summary}`),
  ];
  const asked = args.includes("--help") || args.includes("-h");
  write(asked ? io.stdout : io.stderr, `${asked ? "" : `antler ${words.join(" ")}: name one of its commands\n\n`}${lines.join("\n")}`);
  return asked ? 0 : 2;
}

/**
 * `--help` on a command prints its usage; a bad option prints a one-line error and the usage (exit 2). A command
 * that declares its options gets them parsed and checked here, and its usage written from them.
 */
export async function runCommand<I>(command: CliCommand | KernelCommand, rest: string[], io: I & BaseIO): Promise<number> {
  const declared = "options" in command || "positionals" in command;
  const usageText = declared ? declaredUsage(command as never) : `Usage: ${command.usage ?? `antler ${command.name} [options]`}`;
  if (rest.includes("--help") || rest.includes("-h")) {
    const [line, ...details] = usageText.split("\n");
    write(io.stdout, [line, "", command.summary, ...details].join("\n"));
    return 0;
  }
  try {
    const parsed = declared ? parseDeclaredArgs(command as never, rest) : {};
    return await command.run(rest, { ...io, ...parsed } as never);
  } catch (err) {
    if (!(err instanceof CliUsageError) && !String((err as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS")) throw err;
    write(
      io.stderr,
      `antler ${command.name}: ${(err as Error).message.split("\n")[0]}\n${usageText.split("\n")[0]}\nRun \`antler ${command.name} --help\` for its options.`,
    );
    return 2;
  }
}

/** Runs the `antler` CLI and resolves to its exit code. Never calls process.exit. */
export async function main(argv: readonly string[], environment: CliEnvironment = {}): Promise<number> {
  const io = {
    stdin: environment.stdin,
    stdout: environment.stdout ?? process.stdout,
    stderr: environment.stderr ?? process.stderr,
    cwd: environment.cwd ?? process.cwd(),
    env: environment.env ?? process.env,
  };
  const args = [...argv];
  try {
    if (args[0] === "--version" || args[0] === "-v") {
      write(io.stdout, KERNEL_VERSION);
      return 0;
    }
    if (wordsOf(args).length === 0 || args[0] === "help") {
      write(io.stdout, await helpText(args, io));
      return 0;
    }
    const builtin = matchCommand(kernelCommands, args);
    if (builtin) return await runCommand(builtin.command, builtin.rest, io);
    const kernelGroup = groupHelp(kernelCommands, args, io);
    if (kernelGroup !== undefined) return kernelGroup;

    // Anything else may be a command contributed by a plugin: boot the kernel from config and look there.
    // `-v`/`--verbose` on a command shows plugins' info logs, as ANTLER_LOG_LEVEL=info does.
    const verbose = args.some((a) => a === "-v" || a === "--verbose") ? { ANTLER_LOG_LEVEL: "info" } : {};
    return await withKernel(takeConfigFlag(args).configPath, { ...io, env: { ...io.env, ...verbose } }, async (kernel) => {
      const contributed = matchCommand(kernel.commands, args, true);
      if (!contributed) {
        const group = groupHelp(kernel.commands, args, io);
        if (group !== undefined) return group;
        const words = wordsOf(args).map((i) => args[i]);
        write(io.stderr, `antler: unknown command "${words.join(" ")}"\n\n${usage(kernel.commands)}`);
        return 2;
      }
      return await runCommand(contributed.command, contributed.rest, { ...io, kernel });
    });
  } catch (err) {
    if (isAntlerError(err)) {
      write(io.stderr, `✖ ${err.message}`);
      return 1;
    }
    write(io.stderr, `✖ ${(err as Error)?.stack ?? String(err)}`);
    return 1;
  }
}
