import type { MiddlewareSpec } from "@antler/kernel";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { runIdentity } from "./thread-data.js";

export const INTERRUPTED_TOOL_RESULT =
  "This tool call was interrupted before it returned a result (the previous run ended early). Call it again if you still need it.";

const placeholder = (call: { id: string; name: string }) =>
  new ToolMessage({ content: INTERRUPTED_TOOL_RESULT, tool_call_id: call.id, name: call.name, status: "error" });

/**
 * Providers reject a history where an assistant tool call has no tool result (a run cancelled mid-tool leaves
 * one behind). The request gets a placeholder result right after such a call; the stored history is untouched.
 */
export function patchDanglingToolCalls(messages: readonly BaseMessage[]): BaseMessage[] {
  const answered = new Set<string>();
  for (const m of messages) if (ToolMessage.isInstance(m)) answered.add(m.tool_call_id);
  const out: BaseMessage[] = [];
  for (const m of messages) {
    out.push(m);
    if (!AIMessage.isInstance(m)) continue;
    for (const call of m.tool_calls ?? []) {
      if (call.id && !answered.has(call.id)) {
        out.push(placeholder({ id: call.id, name: call.name }));
        answered.add(call.id);
      }
    }
  }
  return out;
}

/**
 * What a scan of a thread's messages found, up to `length`: the tool calls still without a result (`open`, by
 * call id, with the position of the assistant message that made them) and results that came before their call.
 * A thread's next scan starts where this one stopped, as long as the list still ends the same way there.
 */
interface ThreadScan {
  length: number;
  last: BaseMessage | undefined;
  open: Map<string, { index: number; name: string }>;
  early: Set<string>;
}

const RECENT_THREADS = 256;

function continues(scan: ThreadScan, messages: readonly BaseMessage[]): boolean {
  if (scan.length > messages.length) return false;
  if (scan.length === 0) return true;
  const at = messages[scan.length - 1];
  return at === scan.last || (at?.id !== undefined && at.id === scan.last?.id);
}

function scanOn(messages: readonly BaseMessage[], previous: ThreadScan | undefined): ThreadScan {
  const scan: ThreadScan =
    previous && continues(previous, messages)
      ? { ...previous, open: new Map(previous.open), early: new Set(previous.early) }
      : { length: 0, last: undefined, open: new Map(), early: new Set() };
  for (let i = scan.length; i < messages.length; i++) {
    const m = messages[i];
    if (ToolMessage.isInstance(m)) {
      if (!scan.open.delete(m.tool_call_id)) scan.early.add(m.tool_call_id);
    } else if (AIMessage.isInstance(m)) {
      for (const call of m.tool_calls ?? []) {
        if (call.id && !scan.early.has(call.id) && !scan.open.has(call.id)) scan.open.set(call.id, { index: i, name: call.name });
      }
    }
  }
  scan.length = messages.length;
  scan.last = messages.at(-1);
  return scan;
}

/** `messages` with a placeholder result after each open call, in the order the assistant message made them. */
function withPlaceholders(messages: readonly BaseMessage[], open: ThreadScan["open"]): BaseMessage[] {
  const byIndex = new Map<number, Array<{ id: string; name: string }>>();
  for (const [id, { index, name }] of open) byIndex.set(index, [...(byIndex.get(index) ?? []), { id, name }]);
  const out: BaseMessage[] = [];
  messages.forEach((m, i) => {
    out.push(m);
    for (const call of byIndex.get(i) ?? []) out.push(placeholder(call));
  });
  return out;
}

/**
 * Repairs dangling tool calls in every model request. What a thread's earlier requests found is kept per thread
 * (the most recently used ones), so a request reads the messages added since the previous one, not the whole
 * history; a thread this process has not seen, or whose messages changed other than by appending, is scanned
 * from the start. Only a thread that has a dangling call pays for a copy of its message list.
 */
export function danglingToolCallMiddleware(): MiddlewareSpec {
  const scans = new Map<string, ThreadScan>();
  return {
    name: "DanglingToolCall",
    wrapModelCall(request, handler) {
      const saved = request.state.messages;
      const sent = request.messages;
      // Outer middleware may add notes after the saved messages (Uploads does); anything else gets a full check.
      const savedFirst = sent === saved || (sent.length >= saved.length && (saved.length === 0 || sent[saved.length - 1] === saved.at(-1)));
      const { userId, threadId } = runIdentity(request.runtime);
      if (!savedFirst || !threadId) {
        const patched = patchDanglingToolCalls(sent);
        return handler(patched.length === sent.length ? request : { ...request, messages: patched });
      }
      // Keyed by the first message too: a subagent's run shares its parent's thread id, not its messages.
      const key = `${userId}\u0000${threadId}\u0000${saved[0]?.id ?? ""}`;
      const scan = scanOn(saved, scans.get(key));
      scans.delete(key);
      if (scans.size >= RECENT_THREADS) scans.delete(scans.keys().next().value as string);
      scans.set(key, scan);
      // Notes after the saved messages are not tool calls; their results, if any, are not ours to check.
      return handler(scan.open.size === 0 ? request : { ...request, messages: withPlaceholders(sent, scan.open) });
    },
  };
}
