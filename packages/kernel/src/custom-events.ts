import type { RunnableConfig } from "@langchain/core/runnables";

type LangChainEvents = {
  dispatchCustomEvent: typeof import("@langchain/core/callbacks/dispatch").dispatchCustomEvent;
  getWriter: () => ((chunk: unknown) => void) | undefined;
};
let langchain: LangChainEvents | undefined;

async function loadLangChain(): Promise<LangChainEvents> {
  const [dispatch, graph] = await Promise.all([import("@langchain/core/callbacks/dispatch"), import("@langchain/langgraph")]);
  return { dispatchCustomEvent: dispatch.dispatchCustomEvent, getWriter: graph.getWriter };
}

/** A custom stream event. Antler's own events always have a non-empty `type`. */
export type CustomEventPayload = { type: string; [key: string]: unknown };

/**
 * Emits a custom event to everyone who listens. The LangGraph stream writer goes first and is authoritative
 * (it feeds `stream()` consumers, the gateway and UIs); LangChain callbacks (`streamEvents` consumers) are
 * second and best-effort, so a failing callback never breaks the stream. Payloads without a `type` go to the
 * writer only. Call from inside a graph node or tool; outside a run it is a no-op.
 */
export async function emitCustomEvent(payload: CustomEventPayload | Record<string, unknown>, config?: RunnableConfig): Promise<void> {
  // Loaded on first use, not at import: importing the kernel must not load LangChain. Once loaded, the writer is
  // called synchronously, so events keep the order in which they were emitted.
  langchain ??= await loadLangChain();
  const { dispatchCustomEvent, getWriter } = langchain;
  const write = writerFrom(config, getWriter);
  write?.(payload);
  const type = (payload as { type?: unknown }).type;
  if (typeof type !== "string" || type.length === 0) return;
  try {
    await dispatchCustomEvent(type, payload, config);
  } catch {
    // No callback manager in scope, or a callback threw: the writer already delivered the event.
  }
}

function writerFrom(
  config: RunnableConfig | undefined,
  getWriter: () => ((chunk: unknown) => void) | undefined,
): ((chunk: unknown) => void) | undefined {
  const fromConfig = (config as { writer?: (chunk: unknown) => void } | undefined)?.writer;
  if (fromConfig) return fromConfig;
  try {
    return getWriter();
  } catch {
    return undefined;
  }
}
