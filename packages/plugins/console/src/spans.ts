import { emitCustomEvent, type MiddlewareSpec } from "@antler/kernel";
import { CONSOLE_SPAN_EVENT } from "./config.js";

/** One timed step of a run, as the timeline draws it. Times are epoch milliseconds of the instance that ran it. */
export interface ConsoleSpan {
  type: typeof CONSOLE_SPAN_EVENT;
  kind: "model" | "tool";
  /** The model name (`models:` entry) or the tool name. */
  name: string;
  /** The tool call id (tool spans), so the UI can pair the span with its card. */
  tool_call_id?: string;
  started_at: number;
  duration_ms: number;
  status: "success" | "error";
}

function isErrorMessage(result: unknown): boolean {
  return typeof result === "object" && result !== null && (result as { status?: unknown }).status === "error";
}

async function emitSpan(span: ConsoleSpan): Promise<void> {
  // A span the stream cannot take (no run in scope) is simply not drawn; it must never fail the call it timed.
  await emitCustomEvent({ ...span }).catch(() => undefined);
}

/**
 * The outermost middleware: times every model call and tool call (everything inside it, the other middleware
 * included) and emits a `console_span` event when it ends, so the timeline can be drawn from the run's event log
 * long after the run, on any instance.
 */
export function consoleSpanMiddleware(): MiddlewareSpec {
  return {
    name: "ConsoleSpans",
    async wrapModelCall(request, handler) {
      const context = (request.runtime?.context ?? {}) as Record<string, unknown>;
      const name = typeof context.model_name === "string" ? context.model_name : "model";
      const started = Date.now();
      try {
        const result = await handler(request);
        await emitSpan({
          type: CONSOLE_SPAN_EVENT,
          kind: "model",
          name,
          started_at: started,
          duration_ms: Date.now() - started,
          status: "success",
        });
        return result;
      } catch (error) {
        await emitSpan({
          type: CONSOLE_SPAN_EVENT,
          kind: "model",
          name,
          started_at: started,
          duration_ms: Date.now() - started,
          status: "error",
        });
        throw error;
      }
    },
    async wrapToolCall(request, handler) {
      const base = {
        type: CONSOLE_SPAN_EVENT,
        kind: "tool",
        name: request.toolCall.name,
        tool_call_id: request.toolCall.id ?? "",
      } as const;
      const started = Date.now();
      try {
        const result = await handler(request);
        await emitSpan({
          ...base,
          started_at: started,
          duration_ms: Date.now() - started,
          status: isErrorMessage(result) ? "error" : "success",
        });
        return result;
      } catch (error) {
        await emitSpan({ ...base, started_at: started, duration_ms: Date.now() - started, status: "error" });
        throw error;
      }
    },
  };
}
