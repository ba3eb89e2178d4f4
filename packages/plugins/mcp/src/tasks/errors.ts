import { AntlerError, type AntlerErrorOptions, type ErrorCode } from "@antler/kernel";

/**
 * Error codes of durable MCP tasks, in the kernel's `ANTLER_ERR_*` shape (the kernel's list is closed, so they
 * are declared here and carried by an ordinary `AntlerError`).
 */
export const McpTaskErrorCodes = {
  /** No background task with that id on this thread (another user's or thread's task looks the same). */
  NOT_FOUND: "ANTLER_ERR_MCP_TASK_NOT_FOUND",
  /** `cancel_background_task` without a task id while the thread has several (or no) active tasks. */
  AMBIGUOUS: "ANTLER_ERR_MCP_TASK_AMBIGUOUS",
  /** The task already finished, or its tool has no `cancel_tool`. */
  NOT_CANCELLABLE: "ANTLER_ERR_MCP_TASK_NOT_CANCELLABLE",
  /** The start tool's result carried no job handle in `handle_field`. */
  NO_HANDLE: "ANTLER_ERR_MCP_TASK_NO_HANDLE",
  /** A task tool was called outside a thread (the task would have nowhere to report). */
  NO_THREAD: "ANTLER_ERR_MCP_TASK_NO_THREAD",
  /** `antler mcp tasks ...` was called with bad arguments. */
  USAGE: "ANTLER_ERR_MCP_TASK_USAGE",
} as const;

export type McpTaskErrorCode = (typeof McpTaskErrorCodes)[keyof typeof McpTaskErrorCodes];

export function mcpTaskError(code: McpTaskErrorCode, message: string, options: AntlerErrorOptions = {}): AntlerError {
  return new AntlerError(code as unknown as ErrorCode, message, options);
}
