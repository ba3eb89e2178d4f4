import { emitCustomEvent, type MiddlewareSpec } from "@antler/kernel";
import { CONSOLE_SPAN_EVENT } from "./config.js";

/** One timed step of a run, as the timeline draws it. Times are epoch milliseconds of the instance that ran it. */
export interface ConsoleSpan {
  type: typeof CONSOLE_SPAN_EVENT;
  kind: "model" | "tool" | "middleware";
  /** The model name (`models:` entry), the tool name, or `<middleware>.<hook>`. */
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

export async function emitSpan(span: ConsoleSpan): Promise<void> {
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

/** What the kernel publishes on `antler:middleware` for each node-style middleware hook call. */
interface MiddlewareHookSpan {
  middleware: string;
  hook: string;
  durationMs: number;
  ok: boolean;
  traceId: string | null;
}

/**
 * Draws middleware hooks on the timeline: the kernel publishes every node-style hook call (with its duration) on
 * the `antler:middleware` diagnostics channel, synchronously inside the hook's graph node, so the span can go into
 * that run's stream. Only runs of this kernel (by trace id) and calls of at least `minMs` are drawn.
 */
export class MiddlewareSpanRelay {
  private readonly liveTraces = new Map<string, number>();
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly minMs: number) {}

  async start(): Promise<void> {
    const [{ MIDDLEWARE_SPAN_CHANNEL }, diagnostics] = await Promise.all([
      import("@antler/kernel/pipeline"),
      import("node:diagnostics_channel"),
    ]);
    const listener = (message: unknown) => this.onHook(message as MiddlewareHookSpan);
    diagnostics.subscribe(MIDDLEWARE_SPAN_CHANNEL, listener);
    this.unsubscribe = () => diagnostics.unsubscribe(MIDDLEWARE_SPAN_CHANNEL, listener);
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.liveTraces.clear();
  }

  runStarted(traceId: string): void {
    this.liveTraces.set(traceId, (this.liveTraces.get(traceId) ?? 0) + 1);
  }

  runEnded(traceId: string): void {
    const n = (this.liveTraces.get(traceId) ?? 1) - 1;
    if (n <= 0) this.liveTraces.delete(traceId);
    else this.liveTraces.set(traceId, n);
  }

  private onHook(event: MiddlewareHookSpan): void {
    if (event.traceId === null || !this.liveTraces.has(event.traceId) || event.durationMs < this.minMs) return;
    const duration = Math.round(event.durationMs);
    void emitSpan({
      type: CONSOLE_SPAN_EVENT,
      kind: "middleware",
      name: `${event.middleware}.${event.hook}`,
      started_at: Date.now() - duration,
      duration_ms: duration,
      status: event.ok ? "success" : "error",
    });
  }
}
