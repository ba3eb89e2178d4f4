import { type ParseArgsConfig, parseArgs } from "node:util";
import { type CliCommand, type CliIO, DEFAULT_USER_ID } from "@antler/kernel";
import { McpTaskErrorCodes, mcpTaskError } from "./errors.js";
import type { BackgroundTaskService } from "./service.js";

const write = (stream: NodeJS.WritableStream, text: string) => stream.write(text.endsWith("\n") ? text : `${text}\n`);

function parse(args: string[], options: NonNullable<ParseArgsConfig["options"]>, usage: string) {
  try {
    return parseArgs({ args, options: { ...options, config: { type: "string", short: "c" } }, allowPositionals: false, strict: true })
      .values as Record<string, string | boolean | undefined>;
  } catch (err) {
    throw mcpTaskError(McpTaskErrorCodes.USAGE, (err as Error).message, { hint: `Usage: ${usage}` });
  }
}

/** `antler mcp tasks list|run`: durable MCP tasks from the command line. */
export function backgroundTaskCommands(service: () => BackgroundTaskService): CliCommand[] {
  return [
    {
      name: "mcp tasks list",
      summary: "List a thread's durable MCP tasks (bounded local fields; never the remote handle).",
      usage: "antler mcp tasks list --thread <id> [--user <id>] [--active]",
      async run(args: string[], io: CliIO) {
        const usage = "antler mcp tasks list --thread <id> [--user <id>] [--active]";
        const values = parse(args, { thread: { type: "string" }, user: { type: "string" }, active: { type: "boolean" } }, usage);
        if (typeof values.thread !== "string")
          throw mcpTaskError(McpTaskErrorCodes.USAGE, "--thread is required", { hint: `Usage: ${usage}` });
        const tasks = await service().list(typeof values.user === "string" ? values.user : DEFAULT_USER_ID, values.thread, {
          activeOnly: values.active === true,
        });
        if (tasks.length === 0) write(io.stdout, `no background tasks on thread ${values.thread}`);
        for (const t of tasks) {
          write(
            io.stdout,
            `${t.task_id}  ${t.task_name}  ${t.status}${t.cancel_requested ? " (cancel requested)" : ""}  updated ${t.updated_at}${
              t.result_summary ? `\n  ${t.result_summary.replaceAll("\n", "\n  ")}` : ""
            }${t.error ? `\n  error: ${t.error}` : ""}`,
          );
        }
        return 0;
      },
    },
    {
      name: "mcp tasks run",
      summary: "Poll durable MCP tasks in this process until SIGINT/SIGTERM (any number of instances may share one database).",
      usage: "antler mcp tasks run [--once]",
      async run(args: string[], io: CliIO) {
        const values = parse(args, { once: { type: "boolean" } }, "antler mcp tasks run [--once]");
        await io.kernel.start();
        const tasks = service();
        if (values.once) {
          const result = await tasks.pollOnce();
          write(io.stdout, `worked on ${result.worked.length} task(s)`);
          return 0;
        }
        tasks.startPoller();
        write(io.stderr, `MCP background task instance ${tasks.instanceId} polling (Ctrl-C to stop)`);
        // The poller's timers never hold the process open; this command exists to, until a signal arrives.
        const keepAlive = setInterval(() => {}, 1 << 30);
        await new Promise<void>((resolveSignal) => {
          const stop = () => {
            process.off("SIGINT", stop);
            process.off("SIGTERM", stop);
            resolveSignal();
          };
          process.on("SIGINT", stop);
          process.on("SIGTERM", stop);
        });
        clearInterval(keepAlive);
        await tasks.stopPoller();
        return 0;
      },
    },
  ];
}
