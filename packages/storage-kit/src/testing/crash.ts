import { spawn } from "node:child_process";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { type BaseCheckpointSaver, type Checkpoint, emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { DeltaCheckpointSaver } from "../delta-saver.js";

/**
 * A scripted thread for crash tests: message `i` has id `m<i>` and content `message <i>`, even ones from the user
 * and odd ones from the model. A turn adds the next two, so what a thread should hold follows from its length
 * alone, and a process restarted after a kill knows what to write next by reading the thread.
 *
 * No vitest here: child processes import this from the built package.
 */
export function scriptedMessage(i: number): BaseMessage {
  const fields = { id: `m${i}`, content: `message ${i}` };
  return i % 2 === 0 ? new HumanMessage(fields) : new AIMessage(fields);
}

export interface ScriptedTurnsOptions {
  threadId: string;
  /** Turns to write; default without end (until the process is killed). */
  turns?: number;
  /** Called after each checkpoint is stored (its `put` returned): the thread's length then, and the checkpoint. */
  onAck?: (length: number, checkpointId: string) => void;
}

/**
 * Writes turns to the thread, one checkpoint each, each the child of the thread's latest checkpoint as a graph
 * writes them: it reads the latest (as a restarted process does), appends the next two scripted messages, and
 * puts the result.
 */
export async function writeScriptedTurns(saver: BaseCheckpointSaver, options: ScriptedTurnsOptions): Promise<void> {
  const thread = { configurable: { thread_id: options.threadId, checkpoint_ns: "" } };
  for (let turn = 0; turn < (options.turns ?? Number.POSITIVE_INFINITY); turn++) {
    const latest = await saver.getTuple(thread);
    const list = (latest?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
    const next = [...list, scriptedMessage(list.length), scriptedMessage(list.length + 1)];
    const version = saver.getNextVersion(latest?.checkpoint.channel_versions.messages as number | undefined);
    const checkpoint: Checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(-1),
      channel_values: { messages: next },
      channel_versions: { messages: version },
    };
    const parent = latest ? { checkpoint_id: latest.checkpoint.id } : {};
    const step = ((latest?.metadata?.step as number | undefined) ?? -1) + 1;
    await saver.put(
      { configurable: { ...thread.configurable, ...parent } },
      checkpoint,
      { source: "loop", step, parents: {} },
      { messages: version },
    );
    options.onAck?.(next.length, checkpoint.id);
  }
}

/** Where a test child can be made to kill itself, on the Nth time it gets there (`point:n`). */
export type GenericCrashPoint = "after-log-append" | "after-checkpoint-write";

/**
 * Makes this process die by SIGKILL at a point of a `DeltaCheckpointSaver`'s write, for crash tests only (a test
 * child calls it; nothing in the saver reads it): `after-log-append` once the Nth batch of message rows is stored
 * and before its checkpoint is written; `after-checkpoint-write` once the Nth checkpoint is stored and before
 * `put` returns, so it is never acknowledged.
 */
export function killAt(saver: BaseCheckpointSaver, point: GenericCrashPoint, nth: number): void {
  if (!(saver instanceof DeltaCheckpointSaver)) throw new Error(`killAt needs a DeltaCheckpointSaver, got ${saver.constructor.name}`);
  let seen = 0;
  const die = () => {
    seen++;
    if (seen === nth) process.kill(process.pid, "SIGKILL");
  };
  if (point === "after-log-append") {
    const append = saver.log.append.bind(saver.log);
    saver.log.append = async (threadId, ns, rows) => {
      const stored = await append(threadId, ns, rows);
      if (stored) die();
      return stored;
    };
  } else {
    const put = saver.inner.put.bind(saver.inner);
    saver.inner.put = async (...args) => {
      const next = await put(...args);
      die();
      return next;
    };
  }
}

/** What a thread read back after a crash looks like, against what the killed process acknowledged. */
export interface ScriptedThreadCheck {
  /** The latest checkpoint's list length. */
  length: number;
  /** Everything wrong with it; empty when the thread is consistent. */
  problems: string[];
}

/**
 * Reads the thread through `saver` (a fresh one, as after a restart) and checks it against the acknowledged
 * checkpoints: the latest list is the scripted messages `0..length-1` in order, each once; it lost nothing
 * acknowledged (`length >= ` the longest acknowledged) and holds at most the one turn that was in flight; and every
 * acknowledged checkpoint still reads back whole, with its length.
 */
export async function checkScriptedThread(
  saver: BaseCheckpointSaver,
  threadId: string,
  acked: ReadonlyMap<string, number>,
): Promise<ScriptedThreadCheck> {
  const problems: string[] = [];
  const latest = await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "" } });
  const list = (latest?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
  problems.push(...scriptProblems(list, "latest checkpoint"));
  const longest = Math.max(0, ...acked.values());
  if (list.length < longest) problems.push(`latest checkpoint holds ${list.length} messages but ${longest} were acknowledged`);
  if (list.length > longest + 2)
    problems.push(`latest checkpoint holds ${list.length} messages, more than the ${longest} acknowledged plus one turn`);
  for (const [checkpointId, length] of acked) {
    const tuple = await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpointId } });
    if (!tuple) {
      problems.push(`acknowledged checkpoint ${checkpointId} is gone`);
      continue;
    }
    const older = (tuple.checkpoint.channel_values.messages ?? []) as BaseMessage[];
    if (older.length !== length) problems.push(`acknowledged checkpoint ${checkpointId} holds ${older.length} messages, not ${length}`);
    problems.push(...scriptProblems(older, `checkpoint ${checkpointId}`));
  }
  return { length: list.length, problems };
}

function scriptProblems(list: readonly BaseMessage[], where: string): string[] {
  const problems: string[] = [];
  for (let i = 0; i < list.length && problems.length < 5; i++) {
    const message = list[i] as BaseMessage;
    if (message.id !== `m${i}` || message.content !== `message ${i}`) {
      problems.push(`${where}: message ${i} is ${message.id} (${JSON.stringify(message.content)}), expected m${i}`);
    }
  }
  return problems;
}

/** How a writer child ended, and the checkpoints it acknowledged on the way. */
export interface WriterRun {
  /** Checkpoint id → the thread's length in it, for each `ack` line the child printed. */
  acked: Map<string, number>;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

export interface WriterRunOptions {
  /** Extra environment (on top of this process's), e.g. `ANTLER_TEST_CRASH_AT`. */
  env?: Record<string, string>;
  /** Sends SIGKILL this many ms after the child prints `ready`. */
  killAfterMs?: number;
  /** Fails the run (SIGKILL and reject) if it takes longer; default 60 000 ms. */
  timeoutMs?: number;
}

/**
 * Runs a writer script (`node <script> ...args`) that prints `ready`, `ack <length> <checkpoint id>` lines and
 * `done` (see `writeScriptedTurns`), and resolves once it has exited, however it ended.
 */
export function runWriter(script: string, args: readonly string[], options: WriterRunOptions = {}): Promise<WriterRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const acked = new Map<string, number>();
    let stdout = "";
    let stderr = "";
    const timers: NodeJS.Timeout[] = [];
    timers.push(
      setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`writer ${script} ${args.join(" ")} ran past ${options.timeoutMs ?? 60_000} ms; stderr: ${stderr}`));
      }, options.timeoutMs ?? 60_000),
    );
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk;
      let newline = stdout.indexOf("\n");
      while (newline >= 0) {
        const line = stdout.slice(0, newline);
        stdout = stdout.slice(newline + 1);
        const [word, length, checkpointId] = line.split(" ");
        if (word === "ack" && checkpointId) acked.set(checkpointId, Number(length));
        if (word === "ready" && options.killAfterMs !== undefined)
          timers.push(setTimeout(() => child.kill("SIGKILL"), options.killAfterMs));
        newline = stdout.indexOf("\n");
      }
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      for (const timer of timers) clearTimeout(timer);
      resolve({ acked, code, signal, stderr });
    });
  });
}
