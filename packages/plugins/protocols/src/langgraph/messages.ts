import type { SerializedMessage, ValuesEvent } from "@antler/plugin-runtime";

/**
 * A message as LangGraph's SDK reads it (`Message` in `@langchain/langgraph-sdk`): LangChain's message dict. Only
 * the fields Antler has are set; the SDK and `useStream` treat the others as absent.
 */
export interface LangGraphMessage {
  type: "human" | "ai" | "tool" | "system";
  id?: string;
  content: string;
  name?: string;
  additional_kwargs?: Record<string, unknown>;
  tool_calls?: Array<{ id: string; name: string; args: Record<string, unknown>; type: "tool_call" }>;
  tool_call_id?: string;
  status?: "success" | "error";
  artifact?: unknown;
}

/** Antler's serialized message → LangGraph's message dict (tool calls gain `type: "tool_call"`). */
export function toLangGraphMessage(message: SerializedMessage): LangGraphMessage {
  const out: LangGraphMessage = { type: message.type, content: message.content };
  if (message.id !== undefined) out.id = message.id;
  if (message.name !== undefined) out.name = message.name;
  if (message.additional_kwargs !== undefined) out.additional_kwargs = message.additional_kwargs;
  if (message.tool_calls !== undefined) {
    out.tool_calls = message.tool_calls.map((call) => ({ id: call.id, name: call.name, args: call.args, type: "tool_call" as const }));
  }
  if (message.tool_call_id !== undefined) out.tool_call_id = message.tool_call_id;
  if (message.status !== undefined) out.status = message.status;
  if (message.artifact !== undefined) out.artifact = message.artifact;
  return out;
}

/** The graph state as LangGraph's `values` (state, stream mode `values`): Antler's values with messages as dicts. */
export type LangGraphValues = Omit<ValuesEvent["data"], "messages"> & { messages: LangGraphMessage[] };

export function toLangGraphValues(values: ValuesEvent["data"]): LangGraphValues {
  return { ...values, messages: values.messages.map(toLangGraphMessage) };
}
