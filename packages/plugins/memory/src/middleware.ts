import { DEFAULT_USER_ID, type HookRuntime, type Logger, type MiddlewareSpec } from "@antler/kernel";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { TranscriptMessage } from "./extraction.js";
import { type MemoryService, memoryScope } from "./service.js";
import type { MemoryScope } from "./store.js";

export const MEMORY_MIDDLEWARE_NAME = "Memory";

// Injected blocks per turn, so the model calls of one turn's tool loop share one lookup.
const MAX_CACHED_TURNS = 512;

interface Who {
  scope: MemoryScope;
  threadId: string | undefined;
}

function scopeOf(runtime: Pick<HookRuntime, "context"> | undefined): Who | null {
  const ctx = (runtime?.context ?? {}) as Record<string, unknown>;
  const userId = typeof ctx.user_id === "string" && ctx.user_id !== "" ? ctx.user_id : DEFAULT_USER_ID;
  const agent = typeof ctx.agent_name === "string" ? ctx.agent_name : "";
  try {
    return { scope: memoryScope(userId, agent), threadId: typeof ctx.thread_id === "string" ? ctx.thread_id : undefined };
  } catch {
    return null; // an agent name memory cannot scope by: no memory for this run rather than a failed turn
  }
}

function textOf(message: BaseMessage): string {
  return message.text.trim();
}

/**
 * The conversation as extraction reads it: user messages and final assistant answers, no tool traffic, oldest
 * first, at most the newest `limit` of them (extraction never reads more, so a long thread costs no more).
 */
export function transcriptOf(messages: readonly BaseMessage[], limit = Number.POSITIVE_INFINITY): TranscriptMessage[] {
  const out: TranscriptMessage[] = [];
  for (let i = messages.length - 1; i >= 0 && out.length < limit; i--) {
    const m = messages[i] as BaseMessage;
    const role = HumanMessage.isInstance(m) ? "user" : AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) === 0 ? "assistant" : null;
    if (!role) continue;
    const text = textOf(m);
    if (text) out.push({ id: m.id ?? `#${i}`, role, text });
  }
  return out.reverse();
}

function latestHuman(messages: readonly BaseMessage[]): { index: number; message: HumanMessage } | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m && HumanMessage.isInstance(m)) return { index: i, message: m };
  }
  return null;
}

/** A reply that ends the turn: an AI message without tool calls (one with tool calls, clarification included, goes on). */
function isFinalAnswer(message: unknown): message is AIMessage {
  return AIMessage.isInstance(message) && (message.tool_calls?.length ?? 0) === 0;
}

/**
 * DeerFlow's Memory middleware, for `memory.mode: middleware`. Everything happens in one `wrapModelCall`, which
 * adds no graph step and no node hook to the turn.
 *
 * Injection: the relevant memory goes into each model request of the turn as a separate `<memory>` message just
 * before the latest user message, never into the system prompt, so the static prompt (and the conversation before
 * the turn) stays byte-identical and prefix-cacheable. It is never written to the thread. One lookup per turn,
 * shared by the turn's model calls.
 *
 * Extraction: when the model's reply is the turn's final answer, the conversation is queued for the debounced
 * extraction and the hook returns at once; the model call happens off the turn's critical path.
 */
export function memoryMiddleware(service: MemoryService, logger?: Logger): MiddlewareSpec {
  /** A turn's lookup, shared by its model calls, and the `<memory>` message made from it. */
  interface Turn {
    key: string;
    /** The `<memory>` message once known (null: nothing to inject). */
    note?: HumanMessage | null;
    /** The lookup, when it had to wait for the database. */
    pending?: Promise<HumanMessage | null>;
  }
  const turns = new Map<string, Turn>();
  const inject = service.config.injection_enabled;
  const failed = (key: string, err: unknown): null => {
    // Memory is an aid: a database hiccup costs this turn its memory, never the turn itself.
    logger?.warn({ err }, "memory lookup failed; the turn runs without memory");
    turns.delete(key);
    return null;
  };
  // The last `<memory>` message of each recent scope: a turn whose block reads the same (the usual case while a
  // conversation stays on one topic) reuses it instead of building another message.
  const lastNotes = new Map<string, HumanMessage>();
  const noteOf = (scopeKey: string, block: string | null): HumanMessage | null => {
    if (!block) return null;
    const last = lastNotes.get(scopeKey);
    if (last?.content === block) return last;
    const note = new HumanMessage({ content: block });
    lastNotes.delete(scopeKey);
    if (lastNotes.size >= MAX_CACHED_TURNS) lastNotes.delete(lastNotes.keys().next().value as string);
    lastNotes.set(scopeKey, note);
    return note;
  };
  const turnFor = (scope: MemoryScope, human: HumanMessage): Turn => {
    const scopeKey = `${scope.userId}\0${scope.agentName}`;
    const key = `${scopeKey}\0${human.id ?? human.text}`;
    let turn = turns.get(key);
    if (!turn) {
      turn = { key };
      try {
        // Usually ready at once (the scope's snapshot is in memory); a promise when the database must be asked.
        const block = service.contextBlock(scope, human.text);
        if (block instanceof Promise)
          turn.pending = block.then(
            (text) => noteOf(scopeKey, text),
            (err: unknown) => failed(key, err),
          );
        else turn.note = noteOf(scopeKey, block);
      } catch (err) {
        return { key, note: failed(key, err) }; // not kept: the turn's next model call tries again
      }
      if (turns.size >= MAX_CACHED_TURNS) turns.delete(turns.keys().next().value as string);
      turns.set(key, turn);
    }
    return turn;
  };
  const queue = (who: Who, history: readonly BaseMessage[], reply: AIMessage): void => {
    if (!who.threadId) return;
    const limit = service.config.max_extraction_messages;
    // transcriptOf([...history, reply], limit), without copying the thread's history.
    const text = textOf(reply);
    const transcript = text ? transcriptOf(history, limit - 1) : transcriptOf(history, limit);
    if (text && limit > 0) transcript.push({ id: reply.id ?? `#${history.length}`, role: "assistant", text });
    service.queueExtraction(who.scope, who.threadId, transcript);
  };
  return {
    name: MEMORY_MIDDLEWARE_NAME,
    async wrapModelCall(request, handler) {
      const who = scopeOf(request.runtime);
      if (!who) return handler(request);
      let next = request;
      let turn: Turn | undefined;
      const latest = inject ? latestHuman(request.messages) : null;
      if (latest) {
        turn = turnFor(who.scope, latest.message);
        turn.note ??= (await turn.pending) ?? null;
        if (turn.note) {
          const messages = [...request.messages];
          messages.splice(latest.index, 0, turn.note);
          next = { ...request, messages };
        }
      }
      const result = await handler(next);
      if (isFinalAnswer(result)) {
        // The turn is over: its block is not kept until evicted (kept, every turn's would outlive it).
        if (turn && turns.get(turn.key) === turn) turns.delete(turn.key);
        queue(who, request.state.messages, result);
      }
      return result;
    },
  };
}
