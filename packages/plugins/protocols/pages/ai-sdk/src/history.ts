import type { UIMessage } from "ai";

/** A message as the gateway's `GET /api/threads/{id}/state` lists it. */
interface ThreadMessage {
  type: "human" | "ai" | "tool" | "system";
  id?: string;
  content: string;
  tool_calls?: Array<{ id: string; name: string; args: Record<string, unknown> }>;
  tool_call_id?: string;
  status?: "success" | "error";
}

type AssistantPart = UIMessage["parts"][number];

/**
 * The thread's earlier turns as useChat's messages, for a page opened on an existing chat: each human message
 * is a user message, and the AI and tool messages after it are one assistant message (text parts and tool parts),
 * the way the UI message stream builds one per run. Null: the thread does not exist yet (a new chat).
 */
export async function loadChatHistory(gateway: string, threadId: string, apiKey: string): Promise<UIMessage[] | null> {
  const response = await fetch(`${gateway}/api/threads/${encodeURIComponent(threadId)}/state?messages_limit=all`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`loading the thread failed: HTTP ${response.status} ${await response.text()}`);
  const { messages } = (await response.json()) as { messages: ThreadMessage[] };
  const out: UIMessage[] = [];
  let assistant: { id: string; role: "assistant"; parts: AssistantPart[] } | null = null;
  const results = new Map(messages.filter((m) => m.type === "tool").map((m) => [m.tool_call_id, m]));
  for (const [i, message] of messages.entries()) {
    if (message.type === "human") {
      assistant = null;
      out.push({ id: message.id ?? `human-${i}`, role: "user", parts: [{ type: "text", text: message.content }] });
    } else if (message.type === "ai") {
      if (assistant === null) {
        assistant = { id: message.id ?? `ai-${i}`, role: "assistant", parts: [] };
        out.push(assistant);
      }
      if (message.content !== "") assistant.parts.push({ type: "text", text: message.content, state: "done" });
      for (const call of message.tool_calls ?? []) assistant.parts.push(toolPart(call, results.get(call.id)));
    }
  }
  return out;
}

function toolPart(call: { id: string; name: string; args: Record<string, unknown> }, result: ThreadMessage | undefined): AssistantPart {
  const base = { type: "dynamic-tool" as const, toolName: call.name, toolCallId: call.id, input: call.args };
  if (result === undefined) return { ...base, state: "input-available" };
  if (result.status === "error") return { ...base, state: "output-error", errorText: result.content };
  return { ...base, state: "output-available", output: result.content };
}
