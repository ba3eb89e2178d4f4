import { randomUUID } from "node:crypto";
import { fstatSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { type CliIO, type CliParsed, DEFAULT_USER_ID, resolveVirtualPath, threadPaths } from "@antler/kernel";
import { AntlerClient, type RunCallOptions } from "../client/client.js";
import { TurnRenderer, type TurnSummary } from "./render.js";

const write = (stream: NodeJS.WritableStream, text: string) => stream.write(text.endsWith("\n") ? text : `${text}\n`);

export type TurnOptions = Pick<RunCallOptions, "threadId" | "model" | "agent" | "bootstrap" | "thinking" | "reasoningEffort"> & {
  events: boolean;
};

/** The prompt and the turn's options; `--config` and `-v` are the CLI's own (read before the kernel booted). */
export function runOptions(args: string[]): { prompt: string; turn: TurnOptions } {
  const { values, positionals, tokens } = parseArgs({
    args,
    options: {
      config: { type: "string", short: "c" },
      thread: { type: "string", short: "t" },
      model: { type: "string", short: "m" },
      agent: { type: "string", short: "a" },
      bootstrap: { type: "boolean" },
      // Node 20's parseArgs has no negated options; of the two, the last one given wins.
      thinking: { type: "boolean" },
      "no-thinking": { type: "boolean" },
      "reasoning-effort": { type: "string" },
      events: { type: "boolean" },
      // Read by the CLI before the kernel boots (plugins' info logs); accepted here so it is not an unknown option.
      verbose: { type: "boolean", short: "v" },
    },
    allowPositionals: true,
    strict: true,
    tokens: true,
  });
  const thinking = tokens.filter((t) => t.kind === "option" && (t.name === "thinking" || t.name === "no-thinking")).at(-1);
  return {
    prompt: positionals.join(" ").trim(),
    turn: {
      threadId: values.thread,
      model: values.model,
      agent: values.agent,
      bootstrap: values.bootstrap === true,
      thinking: thinking?.kind === "option" ? thinking.name === "thinking" : undefined,
      // Checked with the run (one message for the CLI and the API): minimal, low, medium or high.
      ...(values["reasoning-effort"] !== undefined
        ? { reasoningEffort: values["reasoning-effort"] as RunCallOptions["reasoningEffort"] }
        : {}),
      events: values.events === true,
    },
  };
}

/** Whether two streams (with descriptors) write to the same file, pipe or terminal. */
function sameDestination(a: NodeJS.WritableStream, b: NodeJS.WritableStream): boolean {
  if (a === b) return false; // one stream: the renderer's own writes would pass through the hook
  const fdA = (a as { fd?: unknown }).fd;
  const fdB = (b as { fd?: unknown }).fd;
  if (typeof fdA !== "number" || typeof fdB !== "number") return false;
  try {
    const [x, y] = [fstatSync(fdA), fstatSync(fdB)];
    return x.dev === y.dev && x.ino === y.ino && x.rdev === y.rdev;
  } catch {
    return false;
  }
}

/** Calls `before` ahead of each write to `stream` until the returned function undoes it. */
function beforeEachWrite(stream: NodeJS.WritableStream, before: () => void): () => void {
  const original = stream.write;
  stream.write = function (this: NodeJS.WritableStream, ...args: Parameters<NodeJS.WritableStream["write"]>) {
    before();
    return (original as (...a: typeof args) => boolean).apply(this, args);
  } as NodeJS.WritableStream["write"];
  return () => {
    stream.write = original;
  };
}

/** What the closing line says for a run that stopped before a normal answer (the run's `stop_reason`). */
const STOP_REASONS: Record<string, string> = {
  paused: "paused for approval (antler runs list --status paused)",
  loop_capped: "loop_capped (the agent repeated the same tool calls)",
  turn_capped: "turn_capped (the run reached its turn limit)",
  token_capped: "token_capped (the answer reached its token limit)",
};

async function streamTurn(client: AntlerClient, prompt: string, { events, ...options }: TurnOptions, io: CliIO) {
  const renderer = new TurnRenderer(io.stdout, { events });
  // Logs (`-v`) go to stderr on their own schedule; where stdout and stderr end up in one place (a terminal, `2>&1`),
  // each log line first ends the answer's current line instead of gluing onto it.
  const unbreak = sameDestination(io.stdout, io.stderr) ? beforeEachWrite(io.stderr, () => renderer.breakLine()) : () => {};
  let summary: TurnSummary;
  try {
    for await (const event of client.stream(prompt, options)) renderer.handle(event);
  } finally {
    unbreak();
    summary = renderer.finish();
  }
  if (summary.artifacts.length > 0) {
    write(io.stdout, "\nPresented files:");
    for (const artifact of summary.artifacts) {
      const host = summary.threadId ? hostPathOf(client, summary.threadId, artifact) : undefined;
      write(io.stdout, `  ${artifact}${host ? `  →  ${host}` : ""}`);
    }
  }
  const stopped = summary.stopReason ? ` · stopped: ${STOP_REASONS[summary.stopReason] ?? summary.stopReason}` : "";
  write(io.stderr, `thread ${summary.threadId ?? "?"} · trace ${summary.traceId ?? "?"}${stopped}`);
  return summary;
}

function hostPathOf(client: AntlerClient, threadId: string, virtualPath: string): string | undefined {
  try {
    return resolveVirtualPath(threadPaths(client.kernel.paths.baseDir, DEFAULT_USER_ID, threadId), virtualPath);
  } catch {
    return undefined;
  }
}

/** `antler run "<prompt>"`: one turn on the kernel the CLI booted from config. */
export async function runCommand(args: string[], io: CliIO): Promise<number> {
  const { prompt, turn } = runOptions(args);
  if (!prompt) {
    write(io.stderr, 'antler run: give a prompt, e.g. antler run "Summarize README.md"');
    return 2;
  }
  const client = new AntlerClient({ kernel: io.kernel });
  try {
    await streamTurn(client, prompt, turn, io);
    return 0;
  } finally {
    await client.close();
  }
}

/** `antler chat`: turns read from stdin, one thread, until /exit. */
export async function chatCommand(args: string[], io: CliIO): Promise<number> {
  const { turn } = runOptions(args);
  const client = new AntlerClient({ kernel: io.kernel });
  const threadId = turn.threadId ?? randomUUID();
  const rl = createInterface({ input: io.stdin ?? process.stdin, output: io.stdout, terminal: false });
  write(io.stdout, `Thread ${threadId}. Type /exit to leave.`);
  try {
    io.stdout.write("> ");
    for await (const line of rl) {
      const prompt = line.trim();
      if (prompt === "/exit" || prompt === "/quit") break;
      if (prompt) await streamTurn(client, prompt, { ...turn, threadId }, io);
      io.stdout.write("> ");
    }
    return 0;
  } finally {
    rl.close();
    await client.close();
  }
}

type RunStatus = "pending" | "running" | "paused" | "success" | "error" | "cancelled";

/** What `antler runs list` declares (in plugin.ts), checked by the CLI before it runs. */
interface RunsListOptions {
  status: string;
  user: string | undefined;
  "all-users": boolean | undefined;
  limit: number | undefined;
  json: boolean | undefined;
}

/**
 * `antler runs list --status <status>`: runs in that status across threads, the user's (`--user`, default the CLI's)
 * or every user's (`--all-users`), most recently updated first. A paused run shows what it waits for.
 */
export async function runsListCommand(io: CliIO & CliParsed<RunsListOptions>): Promise<number> {
  const values = io.options;
  const status = values.status as RunStatus;
  const limit = values.limit;
  if (limit !== undefined && limit < 1) {
    write(io.stderr, `antler runs list: --limit must be a whole number of runs, at least 1 (got ${limit})`);
    return 2;
  }
  const client = new AntlerClient({ kernel: io.kernel, userId: values.user });
  try {
    const runs = await client.listRunsByStatus(status, {
      allUsers: values["all-users"] === true,
      ...(limit !== undefined ? { limit } : {}),
    });
    if (values.json) write(io.stdout, JSON.stringify({ runs }, null, 2));
    else if (runs.length === 0) write(io.stdout, `No ${status} runs.`);
    else {
      for (const run of runs) {
        const calls = (run.interrupt?.value.calls as Array<{ tool?: string }> | undefined)?.map((c) => c.tool).join(", ");
        const waits = run.status === "paused" ? `  waits: ${calls ?? run.interrupt?.value.kind ?? "?"} until ${run.resume_by ?? "-"}` : "";
        write(io.stdout, `${run.run_id}  ${run.user_id}/${run.thread_id}  ${run.status}  ${run.updated_at}  trace ${run.trace_id}${waits}`);
      }
    }
    return 0;
  } finally {
    await client.close();
  }
}

/** `antler agents list|show|rm`: the custom agents of a user (default: the CLI's user). */
export async function agentsCommand(action: "list" | "show" | "rm", args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { config: { type: "string", short: "c" }, user: { type: "string", short: "u" }, json: { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  const name = positionals[0];
  if (action !== "list" && !name) {
    write(io.stderr, `antler agents ${action}: name the agent, e.g. antler agents ${action} research-helper (see antler agents list)`);
    return 2;
  }
  const client = new AntlerClient({ kernel: io.kernel, userId: values.user });
  try {
    if (action === "list") {
      const { agents } = await client.listAgents();
      if (values.json) write(io.stdout, JSON.stringify({ agents }, null, 2));
      else if (agents.length === 0) write(io.stdout, "No custom agents. Create one with: antler chat --agent <name> --bootstrap");
      else for (const a of agents) write(io.stdout, `${a.name.padEnd(24)} ${a.scope.padEnd(6)} ${a.model ?? "-"}  ${a.description}`);
    } else if (action === "show") {
      const agent = await client.getAgent(name as string);
      if (values.json) write(io.stdout, JSON.stringify(agent, null, 2));
      else {
        write(io.stdout, `${agent.name} (${agent.scope})${agent.description ? `: ${agent.description}` : ""}`);
        write(io.stdout, `model: ${agent.model ?? "default"}`);
        write(io.stdout, `tool groups: ${agent.tool_groups?.join(", ") ?? "all"}`);
        write(io.stdout, `skills: ${agent.skills?.join(", ") ?? "all enabled"}`);
        write(io.stdout, `thinking: ${agent.thinking === false ? "off" : "on"}${agent.thinking === null ? " (default)" : ""}`);
        write(io.stdout, `\n${agent.soul}`);
      }
    } else {
      await client.deleteAgent(name as string);
      write(io.stdout, `Deleted agent ${name}.`);
    }
    return 0;
  } finally {
    await client.close();
  }
}
