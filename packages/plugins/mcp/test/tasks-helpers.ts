import { type ChildProcess, spawn } from "node:child_process";
import { type CodePlugin, definePlugin, type Kernel, type KernelConfigInput } from "@antler/kernel";
import {
  createTestKernel,
  type ScriptedChatModel,
  type ScriptedStep,
  type ScriptFunction,
  scriptedModelsPlugin,
} from "@antler/kernel/testing";
import type { BaseMessage } from "@langchain/core/messages";
import mcpPlugin, { type BackgroundTaskService, MCP_BACKGROUND_TASKS } from "../src/index.js";

/** The job-handle MCP server of the durable-task tests (a real process, streamable HTTP). */
export const JOB_SERVER = new URL("./fixtures/job-server.mjs", import.meta.url).pathname;
/** A durable-task instance in its own process, for the crash tests (runs compiled code). */
export const TASK_INSTANCE = new URL("./fixtures/task-instance.mjs", import.meta.url).pathname;

export interface JobServerState {
  jobs: Array<{ id: string; label: string; status: string; result: string | null }>;
  cancels: Array<{ job_id: string; at: string; ok: boolean }>;
  statusCalls: Array<{ job_id: string; trace_id: string | null; at: string; held: boolean }>;
  startCalls: Array<{ job_id: string; trace_id: string | null }>;
}

export interface JobServer {
  readonly url: string;
  readonly child: ChildProcess;
  state(): Promise<JobServerState>;
  finish(body?: { status?: string; result?: string }): Promise<void>;
  /** While held, calls of that tool wait (a remote call in flight). */
  hold(hold: boolean, tool?: "job_status" | "cancel_job"): Promise<void>;
  fail(tool: "job_status" | "cancel_job", count: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startJobServer(): Promise<JobServer> {
  const child = spawn(process.execPath, [JOB_SERVER], { stdio: ["ignore", "pipe", "pipe"] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr?.on("data", (d) => {
      err += String(d);
    });
    child.stdout?.on("data", (d) => {
      out += String(d);
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`job server exited with ${code}: ${err}`)));
  });
  const origin = `http://127.0.0.1:${port}`;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${origin}${path}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
    if (!res.ok) throw new Error(`${path}: ${res.status}`);
  };
  return {
    url: `${origin}/mcp`,
    child,
    state: async () => (await (await fetch(`${origin}/control/state`)).json()) as JobServerState,
    finish: (body = {}) => post("/control/finish", body),
    hold: (hold, tool = "job_status") => post("/control/hold", { hold, tool }),
    fail: (tool, count) => post("/control/fail", { tool, count }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 3000).unref();
      }),
  };
}

/** The plugin config of the tests: server `jobs` with one durable tool, fast polls and short leases. */
export function mcpTaskConfig(url: string, backgroundTasks: Record<string, unknown> = {}) {
  return {
    servers: {
      jobs: {
        transport: "http" as const,
        url,
        tasks: { tools: [{ tool: "start_job", status_tool: "job_status", cancel_tool: "cancel_job" }] },
      },
    },
    background_tasks: {
      poll_interval_seconds: 0.1,
      lease_seconds: 2,
      retry_initial_seconds: 0.05,
      retry_max_seconds: 0.2,
      ...backgroundTasks,
    },
  };
}

function lastText(messages: BaseMessage[]): { type: string; text: string } {
  const last = messages[messages.length - 1];
  const content = last?.content;
  return { type: last?.getType() ?? "", text: typeof content === "string" ? content : JSON.stringify(content ?? "") };
}

/**
 * The scripted model of the tests: "start <label>" calls jobs_start_job, "cancel" calls cancel_background_task,
 * "list" calls list_background_tasks, a notification answers "reported: …", and after a tool it says "ok".
 */
export function taskScript(messages: BaseMessage[]): ScriptedStep {
  const last = lastText(messages);
  if (last.type === "tool") return { text: "ok" };
  if (last.text.includes("[Background task update]")) return { text: `reported: ${last.text.slice(0, 200)}` };
  const start = /start (\w+)/.exec(last.text);
  if (start) return { toolCalls: [{ name: "jobs_start_job", args: { label: start[1] } }] };
  const cancel = /cancel ?(bgt_\w+)?/.exec(last.text);
  if (cancel) return { toolCalls: [{ name: "cancel_background_task", args: cancel[1] ? { task: cancel[1] } : {} }] };
  if (last.text.includes("list")) return { toolCalls: [{ name: "list_background_tasks", args: {} }] };
  return { text: "nothing to do" };
}

export interface TaskHarness {
  kernel: Kernel & { logs: Array<Record<string, unknown>> };
  service: BackgroundTaskService;
  model(): ScriptedChatModel;
  contexts: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** A started kernel (default preset) with the scripted model, a context recorder and the MCP plugin. */
export async function taskHarness(options: {
  baseDir: string;
  mcp: Record<string, unknown>;
  storage?: KernelConfigInput["storage"];
  /** Plugins besides the MCP plugin (skills, ...). */
  plugins?: CodePlugin[];
  /** Replaces `taskScript`. */
  respond?: ScriptFunction;
}): Promise<TaskHarness> {
  const respond = options.respond ?? taskScript;
  const models = scriptedModelsPlugin({ scripted: { respond: (messages, call) => respond(messages, call) } });
  const contexts: Array<Record<string, unknown>> = [];
  const recorder = definePlugin({
    name: "@antler/test-context-recorder",
    version: "0.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.middleware.add({
        name: "RecordContext",
        wrapModelCall: (request, handler) => {
          contexts.push({ ...(request.runtime?.context ?? {}) });
          return handler(request);
        },
      });
    },
  });
  const kernel = await createTestKernel({
    builtins: true,
    plugins: [models, recorder, ...(options.plugins ?? []), { plugin: mcpPlugin, config: options.mcp }],
    config: {
      base_dir: options.baseDir,
      models: [{ name: "scripted", provider: "scripted" }],
      title: { enabled: false },
      ...(options.storage ? { storage: options.storage } : {}),
    },
    cwd: options.baseDir,
  });
  return {
    kernel,
    service: kernel.scope.resolve(MCP_BACKGROUND_TASKS),
    model: () => {
      const model = models.models.get("scripted");
      if (!model) throw new Error("the scripted model was never created (no run happened)");
      return model;
    },
    contexts,
    close: () => kernel.close(),
  };
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 20_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
