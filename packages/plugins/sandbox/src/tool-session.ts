import { posix } from "node:path";
import { DEFAULT_USER_ID, isAntlerError, type Sandbox } from "@antler/kernel";
import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { acquireError, type SandboxLease, type SandboxRegistry, type SandboxScope } from "./registry.js";

/**
 * The (user, thread) a run acts for: `thread_id` and `user_id` of the run context (set by the server, never by
 * callers), else the checkpointer's thread id for agents run without Antler's context.
 */
export function scopeOf(runtime: { context?: unknown; configurable?: Record<string, unknown> | undefined }): SandboxScope | undefined {
  const ctx = (runtime.context !== null && typeof runtime.context === "object" ? runtime.context : {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const threadId = text(ctx.thread_id) ?? text(runtime.configurable?.thread_id);
  if (threadId === undefined) return undefined;
  return { threadId, userId: text(ctx.user_id) ?? DEFAULT_USER_ID };
}

/** The first line of an error: AntlerError messages put their hint on later lines, which tools rephrase. */
export function errorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return isAntlerError(err) ? (message.split("\n")[0] ?? message) : message;
}

/** An expected failure the model should read and act on: an error ToolMessage starting with `Error:`. */
export function refusal(runtime: ToolRuntime, tool: string, text: string): ToolMessage {
  return new ToolMessage({ content: `Error: ${text}`, name: tool, tool_call_id: runtime.toolCallId ?? "", status: "error" });
}

/** A successful answer; with a state update, a Command carrying both. */
export function reply(runtime: ToolRuntime, tool: string, text: string, update?: Record<string, unknown>): ToolMessage | Command {
  const message = new ToolMessage({ content: text, name: tool, tool_call_id: runtime.toolCallId ?? "", status: "success" });
  return update ? new Command({ update: { ...update, messages: [message] } }) : message;
}

export type Session = { ok: true; scope: SandboxScope; lease: SandboxLease } | { ok: false; message: ToolMessage };

/**
 * The run's sandbox for a tool call. The Sandbox middleware has normally acquired it already and this returns
 * the same lease at once; on an agent composed without that middleware the tool acquires it here, and the
 * registry's run-end hook still releases it.
 */
export async function openSession(registry: SandboxRegistry, runtime: ToolRuntime, tool: string): Promise<Session> {
  const scope = scopeOf(runtime);
  if (!scope) {
    return {
      ok: false,
      message: refusal(
        runtime,
        tool,
        "this run has no thread_id, so there is no sandbox to work in. This is a host configuration problem; tell the user.",
      ),
    };
  }
  try {
    return { ok: true, scope, lease: await registry.acquire(scope, runtime.signal) };
  } catch (err) {
    return { ok: false, message: refusal(runtime, tool, errorText(acquireError(err))) };
  }
}

export type FileContent = { exists: true; content: string } | { exists: false };

/** Node's errno, or the errno a provider kept in a coded error's details. */
function isMissingFileError(err: unknown): boolean {
  const e = err as { code?: unknown; details?: { errno?: unknown } } | null;
  const code = e?.details?.errno ?? e?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * A file's whole text, or that it does not exist. Providers report a missing file in their own words, so
 * when a read fails for a reason that is not plainly ENOENT the parent folder is listed to tell "missing"
 * apart from "unreadable" (a folder, a permission problem), which is rethrown.
 */
export async function readCurrent(sandbox: Sandbox, path: string): Promise<FileContent> {
  try {
    return { exists: true, content: await sandbox.readFile(path) };
  } catch (err) {
    if (isMissingFileError(err)) return { exists: false };
    let siblings: { path: string }[];
    try {
      siblings = await sandbox.listDir(posix.dirname(path), 1);
    } catch {
      // The parent folder itself is missing (or unlistable, in which case the read error is the better one).
      if (/not found|no such|does not exist|ENOENT/i.test(errorText(err))) return { exists: false };
      throw err;
    }
    if (siblings.some((entry) => posix.resolve(entry.path) === path)) throw err;
    return { exists: false };
  }
}
