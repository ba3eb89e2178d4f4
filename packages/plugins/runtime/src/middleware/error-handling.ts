import { ensureTraceId, isAntlerError, type MiddlewareSpec, redactText } from "@antler/kernel";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { isGraphBubbleUp } from "@langchain/langgraph";

/** Structured facts about a failed tool call, under `additional_kwargs.antler_tool_meta` of its ToolMessage. */
export interface ToolFailureMeta {
  status: "error";
  error_type: string;
  error_code?: string;
  recoverable_by_model: boolean;
  recommended_next_action: string;
  trace_id: string;
}

function errorName(err: unknown): string {
  if (err instanceof Error) return err.constructor?.name && err.constructor.name !== "Error" ? err.constructor.name : err.name;
  return typeof err;
}

function isAbort(err: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true || (err instanceof Error && (err.name === "AbortError" || err.name === "CancelledError"));
}

/**
 * A tool that throws becomes an error ToolMessage the model can read and recover from, and the run goes on.
 * Interrupts and cancellation are not errors and pass through.
 */
export function toolErrorHandlingMiddleware(): MiddlewareSpec {
  return {
    name: "ToolErrorHandling",
    async wrapToolCall(request, handler) {
      try {
        return await handler(request);
      } catch (err) {
        if (isGraphBubbleUp(err) || isAbort(err, request.runtime.signal)) throw err;
        const name = request.toolCall.name;
        const badArgs =
          errorName(err) === "ToolInvocationError" ||
          /did not match expected schema|ToolInputParsingException/i.test(String((err as Error)?.message));
        const message = redactText((err as Error)?.message ?? String(err));
        const meta: ToolFailureMeta = {
          status: "error",
          error_type: badArgs ? "invalid_arguments" : errorName(err),
          recoverable_by_model: true,
          recommended_next_action: badArgs
            ? "fix the arguments to match the tool's schema and call again"
            : "read the error; retry with different input or use another tool",
          trace_id: ensureTraceId(),
          ...(isAntlerError(err) ? { error_code: err.code } : {}),
        };
        const content = badArgs ? `Error: the arguments for ${name} are invalid: ${message}` : `Error: ${name} failed: ${message}`;
        return new ToolMessage({
          content,
          tool_call_id: request.toolCall.id ?? "",
          name,
          status: "error",
          additional_kwargs: { antler_tool_meta: meta },
        });
      }
    },
  };
}

/**
 * A provider error (rate limit, outage, bad credentials) becomes an assistant message that says what went
 * wrong and carries the trace id, instead of a crashed run. Cancellation passes through.
 */
export function llmErrorHandlingMiddleware(): MiddlewareSpec {
  return {
    name: "LLMErrorHandling",
    async wrapModelCall(request, handler) {
      try {
        return await handler(request);
      } catch (err) {
        if (isGraphBubbleUp(err) || isAbort(err, request.runtime.signal)) throw err;
        // A test's scripted model ran out of steps (`SCRIPT_EXHAUSTED` in @antler/kernel/testing): fail the run.
        if (isAntlerError(err) && err.code === "ANTLER_ERR_SCRIPT_EXHAUSTED") throw err;
        const traceId = ensureTraceId();
        const reason = redactText(((err as Error)?.message ?? String(err)).split("\n")[0] ?? "");
        return new AIMessage({
          content: `I could not get a response from the model: ${reason} (trace id ${traceId}). Please try again; if it keeps failing, check the model's configuration.`,
          additional_kwargs: { antler_error_fallback: true, error_type: errorName(err), trace_id: traceId },
          response_metadata: { stop_reason: "model_error" },
        });
      }
    },
  };
}
