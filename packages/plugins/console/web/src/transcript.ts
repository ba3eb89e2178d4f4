// The chat as the page draws it: a flat list of items built from the thread's saved messages and then from the
// run's stream frames. Pure functions of their inputs, so the same code serves a reload and a live run.
import type { FormField } from "../../src/human-input";
import { valuesFrameKeys } from "../../src/values-frame";
import type { MessageKey } from "./messages/en";

export interface ToolCallView {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface HumanInputRequest {
  version: 1 | 2;
  kind: "free_text" | "choice" | "form";
  question: string;
  clarification_type: string;
  context?: string;
  options?: string[];
  fields?: FormField[];
}

export type Item =
  /** `local`: sent from this page and not yet seen saved (its key is not the message id yet). */
  | { kind: "human"; key: string; text: string; local?: boolean }
  | {
      kind: "ai";
      key: string;
      text: string /** The run stopped (cancelled or failed) while this answer streamed. */;
      partial?: "cancelled" | "error";
    }
  | {
      kind: "tool";
      key: string;
      name: string;
      args: Record<string, unknown>;
      result?: string;
      status?: "success" | "error";
      durationMs?: number;
    }
  | { kind: "ask"; key: string; request: HumanInputRequest }
  | { kind: "notice"; key: string; message: MessageKey; tone: "info" | "error" }
  /** A run paused for a person's decision on its pending tool calls (the human-approval interrupt). */
  | { kind: "approval"; key: string; runId: string; calls: PendingCall[]; expiresAt?: string; decided?: boolean }
  /** A failure the user should see as one: the model's (an answer the runtime wrote in its place) or the run's. */
  | { kind: "error"; key: string; title: MessageKey; message: string; code?: string; traceId?: string };

/** One tool call waiting for approval, as the `run_paused` event and the paused run's record list it. */
export interface PendingCall {
  tool_call_id: string;
  tool: string;
  args: Record<string, unknown>;
  rule?: string;
  reason?: string;
}

/** The approval card's item for a paused run's interrupt value (`{ kind: "approval", calls, expires_at }`), if it is one. */
export function approvalItem(runId: string, value: unknown): Extract<Item, { kind: "approval" }> | undefined {
  const v = value as { kind?: unknown; calls?: unknown; expires_at?: unknown } | null | undefined;
  if (v?.kind !== "approval" || !Array.isArray(v.calls)) return undefined;
  const calls = (v.calls as PendingCall[]).filter((c) => typeof c?.tool_call_id === "string" && typeof c.tool === "string");
  return {
    kind: "approval",
    key: `approval-${runId}`,
    runId,
    calls: calls.map((c) => ({ ...c, args: c.args && typeof c.args === "object" ? c.args : {} })),
    ...(typeof v.expires_at === "string" ? { expiresAt: v.expires_at } : {}),
  };
}

export interface SavedMessage {
  type: "human" | "ai" | "tool" | "system";
  id?: string;
  content: string;
  tool_calls?: ToolCallView[];
  tool_call_id?: string;
  name?: string;
  status?: "success" | "error";
  artifact?: unknown;
  additional_kwargs?: Record<string, unknown>;
}

export interface Todo {
  content?: string;
  status?: string;
}

export interface ThreadView {
  items: Item[];
  title: string | null;
  todos: Todo[];
  artifacts: string[];
}

function humanInputOf(artifact: unknown): HumanInputRequest | undefined {
  const value = (artifact as { human_input?: HumanInputRequest } | null | undefined)?.human_input;
  return value && typeof value.question === "string" ? value : undefined;
}

/** Adds a tool result to the card of its call (a new card when the call was not seen), and the human input card. */
function withToolResult(
  items: Item[],
  result: { tool_call_id: string; name?: string | undefined; content: string; status?: "success" | "error"; artifact?: unknown },
): Item[] {
  const out = items.slice();
  const at = out.findIndex((i) => i.kind === "tool" && i.key === result.tool_call_id);
  const status = result.status ?? "success";
  if (at === -1)
    out.push({ kind: "tool", key: result.tool_call_id, name: result.name ?? "tool", args: {}, result: result.content, status });
  else out[at] = { ...(out[at] as Extract<Item, { kind: "tool" }>), result: result.content, status };
  const ask = humanInputOf(result.artifact);
  if (ask && status === "success" && !out.some((i) => i.key === `ask-${result.tool_call_id}`))
    out.push({ kind: "ask", key: `ask-${result.tool_call_id}`, request: ask });
  return out;
}

/**
 * The runtime answers a failed model call with an assistant message that names the reason and the trace id
 * (`additional_kwargs.antler_error_fallback`). It is drawn as an error card, the trace id once, not as an answer.
 */
function modelErrorItem(key: string, text: string, kwargs: Record<string, unknown> | undefined): Item | undefined {
  if (kwargs?.antler_error_fallback !== true) return undefined;
  const traceId = typeof kwargs.trace_id === "string" ? kwargs.trace_id : undefined;
  return {
    kind: "error",
    key,
    title: "error.modelNoAnswer",
    message: text.replace(/\s*\(trace id [^)]*\)/, ""),
    ...(typeof kwargs.error_type === "string" ? { code: kwargs.error_type } : {}),
    ...(traceId ? { traceId } : {}),
  };
}

/** The items of a saved thread (`GET /api/threads/{id}/state`). */
export function itemsFromMessages(messages: readonly SavedMessage[]): Item[] {
  let items: Item[] = [];
  messages.forEach((m, index) => {
    const key = m.id ?? `m${index}`;
    if (m.type === "human") items.push({ kind: "human", key, text: m.content });
    else if (m.type === "ai") {
      const failed = modelErrorItem(key, m.content, m.additional_kwargs);
      if (failed) items.push(failed);
      else if (m.content) items.push({ kind: "ai", key, text: m.content });
      for (const call of m.tool_calls ?? []) items.push({ kind: "tool", key: call.id, name: call.name, args: call.args });
    } else if (m.type === "tool" && m.tool_call_id) {
      items = withToolResult(items, {
        tool_call_id: m.tool_call_id,
        name: m.name,
        content: m.content,
        ...(m.status ? { status: m.status } : {}),
        artifact: m.artifact,
      });
    }
  });
  return items;
}

export interface RunStatus {
  runId: string | null;
  traceId: string | null;
  running: boolean;
  stopReason: string | null;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number } | null;
  error: { code: string; message: string } | null;
  /**
   * Ids of the answers this run's frames have streamed so far. A page that joins a run from its start may hold
   * some of them already, saved by the run's earlier steps: their first frame restarts them instead of adding
   * to them, so the text is neither doubled nor split.
   */
  streamed: string[];
}

export const IDLE_RUN: RunStatus = {
  runId: null,
  traceId: null,
  running: false,
  stopReason: null,
  usage: null,
  error: null,
  streamed: [],
};

/** Applies one stream frame of a run to the view and the run's status. */
export function applyFrame(view: ThreadView, run: RunStatus, event: string, data: unknown): { view: ThreadView; run: RunStatus } {
  const d = data as Record<string, unknown>;
  switch (event) {
    case "metadata":
      return { view, run: { ...run, runId: String(d.run_id ?? ""), traceId: String(d.trace_id ?? "") } };
    case "messages-tuple": {
      // Reasoning and tool call pieces are not the answer's text; the finished tool call arrives as `tool_calls`.
      if (d.type === "ai" && ("reasoning" in d || "tool_call_chunks" in d)) return { view, run };
      if (d.type === "ai") {
        const id = String(d.id);
        const calls = d.tool_calls as ToolCallView[] | undefined;
        if (calls) {
          const known = new Set(view.items.filter((i) => i.kind === "tool").map((i) => i.key));
          const added: Item[] = calls.filter((c) => !known.has(c.id)).map((c) => ({ kind: "tool", key: c.id, name: c.name, args: c.args }));
          return { view: { ...view, items: [...view.items, ...added] }, run };
        }
        // Already drawn as an error card (its values frame came first): the text is in the card.
        if (view.items.some((i) => i.kind === "error" && i.key === id)) return { view, run };
        const items = view.items.slice();
        const at = items.findIndex((i) => i.kind === "ai" && i.key === id);
        const piece = String(d.content ?? "");
        const first = !run.streamed.includes(id);
        const next = first ? { ...run, streamed: [...run.streamed, id] } : run;
        if (at === -1) {
          // An empty piece (a tool-calling turn's text) makes no bubble; the tool cards stand for it.
          if (piece !== "") items.push({ kind: "ai", key: id, text: piece });
        } else items[at] = { kind: "ai", key: id, text: (first ? "" : (items[at] as { text: string }).text) + piece };
        return { view: { ...view, items }, run: next };
      }
      if (d.type === "tool") {
        const items = withToolResult(view.items, {
          tool_call_id: String(d.tool_call_id),
          name: d.name as string | undefined,
          content: String(d.content ?? ""),
          status: d.status === "error" ? "error" : "success",
          artifact: d.artifact,
        });
        return { view: { ...view, items }, run };
      }
      return { view, run };
    }
    case "custom": {
      if (d.type === "run_paused") {
        const card = approvalItem(String(d.run_id ?? run.runId ?? ""), d.interrupt);
        if (!card) return { view, run };
        // Right after the cards of the calls it holds (a replay of a resumed run draws them above their answer).
        const items = view.items.filter((i) => i.key !== card.key);
        const callKeys = new Set(card.calls.map((c) => c.tool_call_id));
        const after = items.findLastIndex((i) => i.kind === "tool" && callKeys.has(i.key));
        items.splice(after === -1 ? items.length : after + 1, 0, card);
        return { view: { ...view, items }, run };
      }
      if (d.type === "run_resumed") {
        // The decision was taken (here, in another tab, or by the pause's timeout): the card stays, answered.
        const key = `approval-${String(d.run_id ?? run.runId ?? "")}`;
        const items = view.items.map((i) => (i.kind === "approval" && i.key === key ? { ...i, decided: true } : i));
        return { view: { ...view, items }, run };
      }
      if (d.type === "console_span" && d.kind === "tool" && typeof d.tool_call_id === "string") {
        const items = view.items.map((i) =>
          i.kind === "tool" && i.key === d.tool_call_id ? { ...i, durationMs: Number(d.duration_ms) } : i,
        );
        return { view: { ...view, items }, run };
      }
      return { view, run };
    }
    case "values": {
      const keys = valuesFrameKeys(d);
      return {
        view: {
          ...view,
          items: withSavedIds(withModelErrors(view.items, d), d),
          title: "title" in keys ? ((keys.title as string | null) ?? view.title) : view.title,
          todos: Array.isArray(keys.todos) ? (keys.todos as Todo[]) : view.todos,
          artifacts: Array.isArray(keys.artifacts) ? (keys.artifacts as string[]) : view.artifacts,
        },
        run,
      };
    }
    case "end":
      return {
        view,
        run: {
          ...run,
          // A pause ends this stream, not the run: the follow ends (and `running` with it) only if nothing resumed it.
          running: d.stop_reason === "paused" ? run.running : false,
          stopReason: (d.stop_reason as string | null) ?? "end_turn",
          usage: (d.usage as RunStatus["usage"]) ?? null,
        },
      };
    case "error": {
      const code = String(d.code ?? "ANTLER_ERR_INTERNAL");
      const cancelled = code === "ANTLER_ERR_RUN_CANCELLED";
      const traceId = typeof d.trace_id === "string" && d.trace_id ? d.trace_id : (run.traceId ?? undefined);
      // An answer this run was streaming when it stopped is kept, marked as cut short.
      const lastItem = view.items.at(-1);
      const kept =
        lastItem?.kind === "ai" && run.streamed.includes(lastItem.key)
          ? [...view.items.slice(0, -1), { ...lastItem, partial: cancelled ? ("cancelled" as const) : ("error" as const) }]
          : view.items;
      return {
        view: {
          ...view,
          items: [
            ...kept,
            cancelled
              ? { kind: "notice", key: `err-${run.runId ?? ""}`, message: "run.cancelled", tone: "info" }
              : {
                  kind: "error",
                  key: `err-${run.runId ?? ""}`,
                  title: "error.runFailed",
                  message: String(d.message ?? ""),
                  code,
                  ...(traceId ? { traceId } : {}),
                },
          ],
        },
        run: { ...run, running: false, stopReason: cancelled ? "cancelled" : "error", error: { code, message: String(d.message ?? "") } },
      };
    }
    default:
      return { view, run };
  }
}

/** The messages a values frame adds (a patch's `add` ops) or holds (a snapshot). */
function messagesOfValuesFrame(data: Record<string, unknown>): SavedMessage[] {
  const snapshot = data.snapshot as { messages?: SavedMessage[] } | undefined;
  if (snapshot) return snapshot.messages ?? [];
  const ops = (data.patch as { messages?: { ops?: Array<{ add?: SavedMessage[] }> } } | undefined)?.messages?.ops ?? [];
  return ops.flatMap((op) => op.add ?? []);
}

/** Answers the stream drew as text that the values frame shows to be the runtime's model-failure message. */
function withModelErrors(items: Item[], data: Record<string, unknown>): Item[] {
  let out = items;
  for (const m of messagesOfValuesFrame(data)) {
    if (m.type !== "ai" || !m.id || m.additional_kwargs?.antler_error_fallback !== true) continue;
    // Only answers on screen are replaced: a snapshot (a join) also holds older messages this page never drew.
    const at = out.findIndex((i) => i.kind === "ai" && i.key === m.id);
    const failed = modelErrorItem(m.id, m.content, m.additional_kwargs);
    if (at === -1 || !failed) continue;
    if (out === items) out = items.slice();
    out[at] = failed;
  }
  return out;
}

/**
 * Gives a message this page sent its saved id once a values frame shows it saved, so actions that name a message
 * (edit and resend, regenerate) can name it.
 */
function withSavedIds(items: Item[], data: Record<string, unknown>): Item[] {
  let out = items;
  for (const m of messagesOfValuesFrame(data)) {
    if (m.type !== "human" || !m.id || out.some((i) => i.key === m.id)) continue;
    const at = out.findIndex((i) => i.kind === "human" && i.local === true && i.text === m.content);
    if (at === -1) continue;
    if (out === items) out = items.slice();
    out[at] = { kind: "human", key: m.id, text: m.content };
  }
  return out;
}
