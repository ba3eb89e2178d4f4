import { DEFAULT_USER_ID, type HookRuntime, type Logger, type MiddlewareSpec } from "@antler/kernel";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { TranscriptMessage } from "./extraction.js";
import { type MemoryService, memoryScope } from "./service.js";
import type { MemoryScope } from "./store.js";

export const MEMORY_MIDDLEWARE_NAME = "Memory";

// Injected blocks per turn, so the model calls of one turn's tool loop share one lookup.
const MAX_CACHED_TURNS = 512;

function scopeOf(runtime: Pick<HookRuntime, "context"> | undefined): { scope: MemoryScope; threadId: string | undefined } | null {
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

/**
 * DeerFlow's Memory middleware, for `memory.mode: middleware`.
 *
 * Injection (`wrapModelCall`): the relevant memory goes into each model request of the turn as a separate
 * `<memory>` message just before the latest user message, never into the system prompt, so the static prompt
 * (and the conversation before the turn) stays byte-identical and prefix-cacheable. It is never written to the
 * thread. One lookup per turn, shared by the turn's model calls.
 *
 * Extraction (`afterModel`, on the turn's final answer): the conversation is queued for the debounced extraction
 * and the hook returns at once; the model call happens off the turn's critical path. An `afterModel` hook that
 * never jumps runs inside the model's own step, where an `afterAgent` hook would add a graph step to every turn.
 */
export function memoryMiddleware(service: MemoryService, logger?: Logger): MiddlewareSpec {
  const injected = new Map<string, Promise<string | null>>();
  const inject = service.config.injection_enabled;
  const blockFor = (scope: MemoryScope, human: HumanMessage): Promise<string | null> => {
    const key = `${scope.userId}\0${scope.agentName}\0${human.id ?? human.text}`;
    let block = injected.get(key);
    if (!block) {
      block = service.contextBlock(scope, human.text).catch((err: unknown) => {
        // Memory is an aid: a database hiccup costs this turn its memory, never the turn itself.
        logger?.warn({ err }, "memory lookup failed; the turn runs without memory");
        injected.delete(key);
        return null;
      });
      if (injected.size >= MAX_CACHED_TURNS) injected.delete(injected.keys().next().value as string);
      injected.set(key, block);
    }
    return block;
  };
  return {
    name: MEMORY_MIDDLEWARE_NAME,
    ...(inject
      ? {
          async wrapModelCall(request, handler) {
            const who = scopeOf(request.runtime);
            const latest = latestHuman(request.messages);
            if (!who || !latest) return handler(request);
            const block = await blockFor(who.scope, latest.message);
            if (!block) return handler(request);
            const messages = [...request.messages];
            messages.splice(latest.index, 0, new HumanMessage({ content: block }));
            return handler({ ...request, messages });
          },
        }
      : {}),
    afterModel(state, runtime) {
      const last = state.messages.at(-1);
      // Only a final answer ends the turn; a reply with tool calls (clarification included) goes on.
      if (!last || !AIMessage.isInstance(last) || (last.tool_calls?.length ?? 0) > 0) return undefined;
      const who = scopeOf(runtime);
      if (!who?.threadId) return undefined;
      service.queueExtraction(who.scope, who.threadId, transcriptOf(state.messages, service.config.max_extraction_messages));
      return undefined;
    },
  };
}
