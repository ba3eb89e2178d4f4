import { type ParseArgsConfig, parseArgs } from "node:util";
import { type CliCommand, type CliIO, DEFAULT_USER_ID, type Kernel } from "@antler/kernel";
import type { TaskInput } from "./config.js";
import { SchedulerErrorCodes, schedulerError } from "./errors.js";
import type { ScheduledTaskView, Scheduler } from "./scheduler.js";
import type { ScheduledRun } from "./store.js";

const write = (stream: NodeJS.WritableStream, text: string) => stream.write(text.endsWith("\n") ? text : `${text}\n`);

type Resolve = (kernel: Kernel) => Scheduler;

interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

function parse(args: string[], options: NonNullable<ParseArgsConfig["options"]>, usage: string): ParsedArgs {
  try {
    const parsed = parseArgs({
      args,
      options: { ...options, config: { type: "string", short: "c" } },
      allowPositionals: true,
      strict: true,
    });
    return { values: parsed.values as ParsedArgs["values"], positionals: parsed.positionals };
  } catch (err) {
    throw schedulerError(SchedulerErrorCodes.INVALID, (err as Error).message, { hint: `Usage: ${usage}` });
  }
}

function idArgument(positionals: string[], usage: string): string {
  const id = positionals[0];
  if (!id || positionals.length > 1) {
    throw schedulerError(SchedulerErrorCodes.INVALID, id ? "give exactly one task id" : "give a task id", {
      hint: `Usage: ${usage}. Ids are listed by \`antler schedule list\`.`,
    });
  }
  return id;
}

/** With `storage.backend: memory` every process has its own empty database: say so instead of silently losing tasks. */
function warnIfEphemeral(io: CliIO): void {
  if (io.kernel.config.storage.backend === "memory") {
    write(
      io.stderr,
      "warning: storage.backend is memory, so tasks live only in this process; use sqlite (default) or postgres to share them",
    );
  }
}

/** `telegram:123456` or `telegram:-100123:42` (a forum topic) as a task's `deliver_to`. */
function deliverTo(value: string, usage: string): { channel: string; chat: string; thread?: string } {
  const [channel, chat, thread, ...rest] = value.split(":");
  if (!channel || !chat || rest.length > 0) {
    throw schedulerError(SchedulerErrorCodes.INVALID, `--deliver-to ${JSON.stringify(value)} is not <channel>:<chat>[:<thread>]`, {
      hint: `Usage: ${usage}. Example: --deliver-to telegram:123456789.`,
    });
  }
  return { channel, chat, ...(thread ? { thread } : {}) };
}

function schedule(task: ScheduledTaskView): string {
  return task.kind === "cron" ? `cron "${task.cron}" ${task.timezone}` : `once ${task.run_at}`;
}

function taskLines(task: ScheduledTaskView): string {
  const last = task.last_status ? `${task.last_status}${task.last_trace_id ? ` (trace ${task.last_trace_id})` : ""}` : "never ran";
  return [
    `${task.id}  [${task.state}]  ${schedule(task)}${task.name ? `  "${task.name}"` : ""}`,
    `  owner ${task.owner_user_id} · thread ${task.thread_policy === "fixed" ? task.thread_id : "new per run"} · next ${task.next_fire_at ?? "—"} · runs ${task.run_count} · last ${last}`,
    ...(task.last_error ? [`  last error: ${task.last_error.split("\n")[0]}`] : []),
    `  prompt: ${task.prompt.length > 100 ? `${task.prompt.slice(0, 97)}...` : task.prompt}`,
  ].join("\n");
}

function runLine(run: ScheduledRun): string {
  return `${run.id}  ${run.status.padEnd(11)} ${run.trigger.padEnd(8)} for ${run.scheduled_for}  attempt ${run.attempt}  trace ${run.trace_id ?? "—"}  thread ${run.thread_id ?? "—"}${run.error ? `\n  ${run.error.split("\n")[0]}` : ""}`;
}

/** `antler schedule add|list|runs|pause|resume|trigger|rm` and `antler scheduler run`. The CLI acts as the operator. */
export function schedulerCommands(resolve: Resolve): CliCommand[] {
  const ADD =
    'antler schedule add (--cron "<m h dom mon dow>" [--tz <zone>] | --at <ISO time>) --prompt "<text>" [--name n] [--user id] [--thread id | --fixed-thread] [--model name] [--agent name] [--deliver-to <channel>:<chat>[:<thread>]] [--paused] [--json]';
  return [
    {
      name: "schedule add",
      summary: "Add a scheduled task: once at an ISO time, or on a cron expression in a timezone.",
      usage: ADD,
      async run(args: string[], io: CliIO) {
        const { values, positionals } = parse(
          args,
          {
            cron: { type: "string" },
            at: { type: "string" },
            tz: { type: "string" },
            timezone: { type: "string" },
            prompt: { type: "string", short: "p" },
            name: { type: "string", short: "n" },
            user: { type: "string", short: "u" },
            thread: { type: "string", short: "t" },
            "fixed-thread": { type: "boolean" },
            model: { type: "string", short: "m" },
            agent: { type: "string", short: "a" },
            paused: { type: "boolean" },
            "deliver-to": { type: "string" },
            json: { type: "boolean" },
          },
          ADD,
        );
        const prompt = (values.prompt as string | undefined) ?? positionals.join(" ");
        const input: TaskInput = {
          prompt,
          ...(values.cron !== undefined ? { cron: values.cron as string } : {}),
          ...(values.at !== undefined ? { at: values.at as string } : {}),
          ...((values.tz ?? values.timezone) !== undefined ? { timezone: (values.tz ?? values.timezone) as string } : {}),
          ...(values.name !== undefined ? { name: values.name as string } : {}),
          ...(values.model !== undefined ? { model: values.model as string } : {}),
          ...(values.agent !== undefined ? { agent: values.agent as string } : {}),
          ...(values.thread !== undefined ? { thread: "fixed" as const, thread_id: values.thread as string } : {}),
          ...(values["fixed-thread"] ? { thread: "fixed" as const } : {}),
          paused: values.paused === true,
          ...(values["deliver-to"] !== undefined ? { deliver_to: deliverTo(values["deliver-to"] as string, ADD) } : {}),
        };
        warnIfEphemeral(io);
        const task = await resolve(io.kernel).add((values.user as string | undefined) ?? DEFAULT_USER_ID, input);
        if (values.json) write(io.stdout, JSON.stringify(task, null, 2));
        else
          write(io.stdout, `Added ${task.id}: ${schedule(task)}, next ${task.next_fire_at}${task.state === "paused" ? " (paused)" : ""}`);
        return 0;
      },
    },
    {
      name: "schedule list",
      summary: "List scheduled tasks with their state, next fire time and last run (status, trace id).",
      usage: "antler schedule list [--user id] [--json]",
      async run(args: string[], io: CliIO) {
        const { values } = parse(
          args,
          { user: { type: "string", short: "u" }, json: { type: "boolean" } },
          "antler schedule list [--user id] [--json]",
        );
        const tasks = await resolve(io.kernel).list((values.user as string | undefined) ?? null);
        if (values.json) write(io.stdout, JSON.stringify(tasks, null, 2));
        else write(io.stdout, tasks.length === 0 ? "No scheduled tasks." : tasks.map(taskLines).join("\n"));
        return 0;
      },
    },
    {
      name: "schedule runs",
      summary: "Show a task's runs, newest first: status, attempt, trace id and thread.",
      usage: "antler schedule runs <id> [--limit n] [--json]",
      async run(args: string[], io: CliIO) {
        const usage = "antler schedule runs <id> [--limit n] [--json]";
        const { values, positionals } = parse(args, { limit: { type: "string" }, json: { type: "boolean" } }, usage);
        const limit = values.limit === undefined ? 20 : Number(values.limit);
        if (!Number.isInteger(limit) || limit <= 0) {
          throw schedulerError(SchedulerErrorCodes.INVALID, `--limit must be a positive integer, not ${JSON.stringify(values.limit)}`);
        }
        const runs = await resolve(io.kernel).runs(null, idArgument(positionals, usage), { limit });
        if (values.json) write(io.stdout, JSON.stringify(runs, null, 2));
        else write(io.stdout, runs.length === 0 ? "No runs yet." : runs.map(runLine).join("\n"));
        return 0;
      },
    },
    ...(["pause", "resume"] as const).map(
      (verb): CliCommand => ({
        name: `schedule ${verb}`,
        summary: verb === "pause" ? "Pause a task (a running occurrence finishes)." : "Resume a paused task from now.",
        usage: `antler schedule ${verb} <id>`,
        async run(args: string[], io: CliIO) {
          const { positionals } = parse(args, {}, `antler schedule ${verb} <id>`);
          const task = await resolve(io.kernel)[verb](null, idArgument(positionals, `antler schedule ${verb} <id>`));
          write(io.stdout, `${task.id} is ${task.state}${task.state === "active" ? `, next ${task.next_fire_at ?? "—"}` : ""}`);
          return 0;
        },
      }),
    ),
    {
      name: "schedule trigger",
      summary: "Run a task now in this process (non-interactively) and wait for it; prints its status and trace id.",
      usage: "antler schedule trigger <id> [--json]",
      async run(args: string[], io: CliIO) {
        const usage = "antler schedule trigger <id> [--json]";
        const { values, positionals } = parse(args, { json: { type: "boolean" } }, usage);
        const { run, done } = await resolve(io.kernel).trigger(null, idArgument(positionals, usage));
        if (run.status === "running" && !values.json)
          write(io.stderr, `running ${run.id} · trace ${run.trace_id} · thread ${run.thread_id}`);
        const finished = await done;
        if (values.json) write(io.stdout, JSON.stringify(finished, null, 2));
        else write(io.stdout, runLine(finished));
        return finished.status === "succeeded" ? 0 : 1;
      },
    },
    {
      name: "schedule rm",
      summary: "Delete a task and its run history.",
      usage: "antler schedule rm <id>",
      async run(args: string[], io: CliIO) {
        const { positionals } = parse(args, {}, "antler schedule rm <id>");
        const id = idArgument(positionals, "antler schedule rm <id>");
        await resolve(io.kernel).remove(null, id);
        write(io.stdout, `Removed ${id}.`);
        return 0;
      },
    },
    {
      name: "scheduler run",
      summary: "Run the scheduler poller in this process until SIGINT/SIGTERM (any number of instances may share one database).",
      usage: "antler scheduler run [--once]",
      async run(args: string[], io: CliIO) {
        const { values } = parse(args, { once: { type: "boolean" } }, "antler scheduler run [--once]");
        const scheduler = resolve(io.kernel);
        warnIfEphemeral(io);
        await io.kernel.start();
        if (values.once) {
          const result = await scheduler.pollOnce();
          write(io.stdout, `claimed ${result.claimed.length}, skipped ${result.skipped.length}, taken over ${result.takenOver.length}`);
          await scheduler.drain();
          return 0;
        }
        scheduler.startPoller();
        write(io.stderr, `scheduler instance ${scheduler.instanceId} polling (Ctrl-C to stop)`);
        // The poller's own timers never hold the process open; this command exists to, until a signal arrives.
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
        write(io.stderr, "scheduler stopping: running occurrences get the shutdown grace period");
        await scheduler.close();
        return 0;
      },
    },
  ];
}
