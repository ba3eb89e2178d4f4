import { type ChildProcess, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import {
  type ClientContext,
  client,
  type McpServer,
  ndJsonStream,
  type PermissionOption,
  PROTOCOL_VERSION,
  type RequestPermissionResponse,
  type SessionNotification,
  type StopReason,
} from "@agentclientprotocol/sdk";

/** Key under which the Antler trace id travels in ACP `_meta`, so an agent's logs can be joined with ours. */
export const TRACE_META_KEY = "antler/trace_id";
export const MODEL_META_KEY = "antler/model";

export interface AcpTurnOptions {
  command: string;
  args: readonly string[];
  /** Full environment of the agent process. */
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  prompt: string;
  autoApprovePermissions: boolean;
  timeoutMs: number;
  mcpServers: readonly McpServer[];
  model?: string | undefined;
  traceId?: string | null | undefined;
  /** Aborts the turn like a timeout does (cancel the session, end the process). */
  signal?: AbortSignal | undefined;
}

export type AcpTurnResult =
  | { kind: "done"; text: string; stopReason: StopReason; permissions: PermissionDecision[] }
  | { kind: "timeout"; text: string; permissions: PermissionDecision[] }
  | { kind: "aborted"; text: string; permissions: PermissionDecision[] }
  | { kind: "not-found"; command: string }
  | { kind: "failed"; message: string; stderr: string; text: string };

export interface PermissionDecision {
  title: string;
  granted: boolean;
}

/** How long a cancelled agent gets to wind down before its process is ended. */
const CANCEL_GRACE_MS = 1_000;
const KILL_GRACE_MS = 2_000;
const STDERR_KEEP = 4_000;

/**
 * Picks the answer to `session/request_permission`: the first allow option when auto-approval is on, else the
 * first reject option. With no fitting option the request is answered `cancelled`, which ACP defines as "not granted".
 */
export function decidePermission(options: readonly PermissionOption[], approve: boolean): RequestPermissionResponse {
  const kinds = approve ? (["allow_once", "allow_always"] as const) : (["reject_once", "reject_always"] as const);
  for (const kind of kinds) {
    const option = options.find((o) => o.kind === kind);
    if (option) return { outcome: { outcome: "selected", optionId: option.optionId } };
  }
  return { outcome: { outcome: "cancelled" } };
}

/** Runs one prompt turn against a freshly spawned ACP agent and always ends the process afterwards. */
export async function runAcpTurn(options: AcpTurnOptions): Promise<AcpTurnResult> {
  let child: ChildProcess;
  try {
    child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
      // Own process group, so adapters that fork (npx, shell wrappers) are ended together with their children.
      detached: process.platform !== "win32",
    });
  } catch (err) {
    if (isNotFound(err)) return { kind: "not-found", command: options.command };
    throw err;
  }
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  const started = await new Promise<{ ok: true } | { ok: false; error: unknown }>((resolve) => {
    child.once("spawn", () => resolve({ ok: true }));
    child.once("error", (error) => resolve({ ok: false, error }));
  });
  if (!started.ok) {
    if (isNotFound(started.error)) return { kind: "not-found", command: options.command };
    return { kind: "failed", message: errorMessage(started.error), stderr: "", text: "" };
  }

  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (data: string) => {
    stderr = (stderr + data).slice(-STDERR_KEEP);
  });

  const chunks: string[] = [];
  const permissions: PermissionDecision[] = [];
  try {
    return await converse(child, options, chunks, permissions, exited);
  } catch (err) {
    return { kind: "failed", message: errorMessage(err), stderr: stderr.trim(), text: chunks.join("") };
  } finally {
    await endProcess(child, exited);
  }
}

async function converse(
  child: ChildProcess,
  options: AcpTurnOptions,
  chunks: string[],
  permissions: PermissionDecision[],
  exited: Promise<void>,
): Promise<AcpTurnResult> {
  if (!child.stdin || !child.stdout) throw new Error("the agent process has no stdio pipes");
  const stream = ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const meta = options.traceId ? { [TRACE_META_KEY]: options.traceId } : undefined;
  let sessionId: string | undefined;

  const app = client({ name: "antler" })
    .onNotification("session/update", ({ params }: { params: SessionNotification }) => {
      if (sessionId !== undefined && params.sessionId !== sessionId) return;
      const update = params.update;
      // Only message text is the agent's answer; thought chunks are its private reasoning and stay out.
      if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") chunks.push(update.content.text);
    })
    .onRequest("session/request_permission", ({ params }) => {
      const response = decidePermission(params.options, options.autoApprovePermissions);
      const granted =
        response.outcome.outcome === "selected" &&
        params.options.some((o) => o.optionId === (response.outcome as { optionId: string }).optionId && o.kind.startsWith("allow"));
      permissions.push({ title: params.toolCall.title ?? params.toolCall.toolCallId, granted });
      return response;
    });

  const processGone = exited.then(() => ({ kind: "exited" as const }));

  return app.connectWith(stream, async (ctx: ClientContext): Promise<AcpTurnResult> => {
    const setup = (async () => {
      const init = await ctx.request("initialize", {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "antler", version: "0.1.0" },
        ...(meta ? { _meta: meta } : {}),
      });
      // stdio servers are for every agent; http and sse only for agents that say they can use them.
      const can = (init as { agentCapabilities?: { mcpCapabilities?: { http?: boolean; sse?: boolean } } }).agentCapabilities
        ?.mcpCapabilities;
      const mcpServers = options.mcpServers.filter((s) => !("type" in s) || (s.type === "http" ? can?.http === true : can?.sse === true));
      const session = await ctx.request("session/new", {
        cwd: options.cwd,
        mcpServers,
        _meta: { ...meta, ...(options.model ? { [MODEL_META_KEY]: options.model } : {}) },
      });
      sessionId = session.sessionId;
      return session.sessionId;
    })();

    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<{ kind: "timeout" }>((resolve) => {
      timer = setTimeout(() => resolve({ kind: "timeout" }), options.timeoutMs);
    });
    const aborted = new Promise<{ kind: "aborted" }>((resolve) => {
      if (options.signal?.aborted) resolve({ kind: "aborted" });
      options.signal?.addEventListener("abort", () => resolve({ kind: "aborted" }), { once: true });
    });
    try {
      const turn = setup.then((id) =>
        ctx
          .request("session/prompt", {
            sessionId: id,
            prompt: [{ type: "text", text: options.prompt }],
            ...(meta ? { _meta: meta } : {}),
          })
          .then((response) => ({ kind: "stop" as const, stopReason: response.stopReason })),
      );
      const outcome = await Promise.race([turn, deadline, aborted, processGone]);
      if (outcome.kind === "stop") {
        return { kind: "done", text: chunks.join(""), stopReason: outcome.stopReason, permissions };
      }
      if (outcome.kind === "exited") {
        throw new Error(`the agent process exited before the turn ended (exit code ${String(child.exitCode)})`);
      }
      turn.catch(() => undefined);
      if (sessionId !== undefined) {
        await ctx.notify("session/cancel", { sessionId }).catch(() => undefined);
        // A well-behaved agent answers the pending prompt with stopReason "cancelled"; give it a moment.
        await Promise.race([turn.catch(() => undefined), delay(CANCEL_GRACE_MS), processGone]);
      }
      return { kind: outcome.kind, text: chunks.join(""), permissions };
    } finally {
      clearTimeout(timer);
    }
  });
}

/** Ends the agent (and its process group): SIGTERM, then SIGKILL if it is still there after a grace period. */
async function endProcess(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.stdin?.destroy();
  signalTree(child, "SIGTERM");
  const gone = await Promise.race([exited.then(() => true), delay(KILL_GRACE_MS).then(() => false)]);
  if (!gone) {
    signalTree(child, "SIGKILL");
    await exited;
  }
}

function signalTree(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined && process.platform !== "win32") process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch {
    // Already gone (ESRCH): nothing left to end.
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function isNotFound(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "ENOENT";
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
