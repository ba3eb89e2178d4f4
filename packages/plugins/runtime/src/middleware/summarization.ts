import { AntlerError, ErrorCodes, type Logger, type MiddlewareSpec } from "@antler/kernel";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { z } from "zod";

export interface SummarizationOptions {
  /** Model that writes the summary. Without one, a deterministic extractive summary is used. */
  model?: BaseChatModel | undefined;
  /**
   * Summarize when the estimated token count of what the model would be sent (the summary and the messages after
   * it) exceeds this. Default 12000; the runtime plugin derives it from the model's context window.
   */
  triggerTokens?: number | undefined;
  /** Also summarize when the thread holds more than this many messages. Off by default. */
  triggerMessages?: number | undefined;
  /** At most this many of the most recent messages stay verbatim. Default 10. */
  keepMessages?: number | undefined;
  /**
   * After a summary, the verbatim tail is cut to fit this many tokens (fewer than `keepMessages` when needed), so
   * the thread lands well under the trigger instead of crossing it again on the next turn. Default 60% of
   * `triggerTokens`.
   */
  targetTokens?: number | undefined;
  /** Upper bound on `summary_text`, in characters. Default 4000. */
  maxSummaryChars?: number | undefined;
  /** Token counter for the trigger; default: approximately one token per four characters. */
  tokenCounter?: ((messages: readonly BaseMessage[]) => number) | undefined;
  /** Where a failed summarizer call is reported (error type only, never message content). */
  logger?: Pick<Logger, "warn"> | undefined;
}

/** The block the summary is shown to the model in, at the end of the system prompt. */
export const SUMMARY_TAG = "conversation_summary";

// Bounds on what the summarizer model is sent: one huge tool output must not crowd out the rest, and the
// whole transcript must stay well inside any model's context (the thread is being summarized because it is big).
const MAX_CHARS_PER_MESSAGE = 2000;
const MAX_TRANSCRIPT_CHARS = 60_000;
// Per-message overhead of the approximate counter: role, separators and ids cost tokens too.
const TOKENS_PER_MESSAGE = 4;

/** The text of a message, with non-text content (images, files) shown as a short marker. */
function renderContent(message: BaseMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((block) => {
      if (block.type === "text" && typeof block.text === "string") return block.text;
      return `[${String(block.type)}]`;
    })
    .join("\n");
}

/** Roughly one token per four characters, counting tool-call arguments. */
export function approximateTokenCount(messages: readonly BaseMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    chars += renderContent(m).length;
    if (AIMessage.isInstance(m) && m.tool_calls?.length) chars += JSON.stringify(m.tool_calls).length;
  }
  return Math.ceil(chars / 4) + messages.length * TOKENS_PER_MESSAGE;
}

/** Shortens to `max` characters; by default also folds whitespace, so one message becomes one line. */
function clip(text: string, max: number, flatten = true): string {
  const flat = flatten ? text.replace(/\s+/g, " ").trim() : text.trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

export interface SummarizationPlan {
  /** Messages to fold into the summary, oldest first: the model no longer sees them. */
  summarize: BaseMessage[];
  /** Index of the first message that stays (besides a kept first human message). */
  cut: number;
  /** Index of the first human message when it stays verbatim although it is before the cut. */
  keptFirst?: number | undefined;
}

/**
 * Where the thread's verbatim part starts after a summary: the model is sent the summary, the kept first request
 * (`first`) and the messages from `from` on. Stored in state next to `summary_text`; the thread's messages are
 * never removed, so the full history stays readable. Positions are checked against the ids, and found again by
 * id (from the end) if something moved them.
 */
export const summaryCutSchema = z.object({
  from: z.number().int().min(0),
  from_id: z.string().optional(),
  first: z.number().int().min(0).optional(),
  first_id: z.string().optional(),
});
export type SummaryCut = z.output<typeof summaryCutSchema>;

/** The state field the cut is kept in. */
export const SUMMARY_CUT_FIELD = "_summary";

/** Index of `id` in `messages`, tried at `at` first, then searched from the end; -1 when it is not there. */
function locate(messages: readonly BaseMessage[], at: number, id: string | undefined): number {
  if (id === undefined) return at < messages.length ? at : -1;
  if (messages[at]?.id === id) return at;
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.id === id) return i;
  return -1;
}

/** What the model is sent of a thread: the kept first request (`firstAt`, -1 for none) and the messages from `from` on. */
interface SummaryView {
  readonly visible: readonly BaseMessage[];
  readonly from: number;
  readonly firstAt: number;
}

function viewAfterSummary(messages: readonly BaseMessage[], cut: SummaryCut | undefined): SummaryView {
  const from = cut ? locate(messages, cut.from, cut.from_id) : 0;
  if (!cut || from <= 0) return { visible: messages, from: 0, firstAt: -1 };
  const found = cut.first === undefined ? -1 : locate(messages, cut.first, cut.first_id);
  const firstAt = found >= 0 && found < from ? found : -1;
  const tail = messages.slice(from);
  return { visible: firstAt >= 0 ? [messages[firstAt] as BaseMessage, ...tail] : tail, from, firstAt };
}

/**
 * What the model is sent of `messages` under `cut`: the kept first request and everything from the cut on. A cut
 * that cannot be found (the messages were edited) shows everything. Costs O(messages after the cut).
 */
export function messagesAfterSummary(messages: readonly BaseMessage[], cut: SummaryCut | undefined): readonly BaseMessage[] {
  return viewAfterSummary(messages, cut).visible;
}

/** The cut stored in state, if it is a valid one. */
export function summaryCutOf(state: Record<string, unknown>): SummaryCut | undefined {
  const parsed = summaryCutSchema.safeParse(state[SUMMARY_CUT_FIELD]);
  return parsed.success ? parsed.data : undefined;
}

/**
 * Chooses what to summarize: everything before the last `keepMessages`, except
 * - the cut never separates an assistant message with tool calls from its tool results: it moves earlier,
 *   to that assistant message, because providers reject a tool result whose call is gone;
 * - the first human message stays (it states the task, and several providers require the conversation to
 *   start with a user turn), unless it alone is over `firstHumanBudget` tokens, in which case it is
 *   summarized like the rest, or the thread could never get under the trigger;
 * - system messages are not summarized (they are instructions, not conversation).
 * Returns null when there is nothing to summarize.
 */
export function planSummarization(
  messages: readonly BaseMessage[],
  keepMessages: number,
  firstHumanBudget: number,
  countTokens: (messages: readonly BaseMessage[]) => number = approximateTokenCount,
  tailBudget?: number,
): SummarizationPlan | null {
  let cut = Math.max(0, messages.length - keepMessages);
  if (tailBudget !== undefined) {
    // Keep only as much of the tail as fits the budget (always the latest message).
    let start = messages.length - 1;
    let tokens = countTokens([messages[start] as BaseMessage]);
    while (start > cut) {
      const more = countTokens([messages[start - 1] as BaseMessage]);
      if (tokens + more > tailBudget) break;
      tokens += more;
      start--;
    }
    cut = Math.max(cut, start);
  }
  // A tool result at the boundary: keep it with the call it answers.
  while (cut > 0 && ToolMessage.isInstance(messages[cut])) cut--;
  // Results can be separated from their call by other messages (parallel calls answered late); follow ids.
  for (let changed = true; changed; ) {
    changed = false;
    const answeredLater = new Set<string>();
    for (let i = cut; i < messages.length; i++) {
      const m = messages[i];
      if (ToolMessage.isInstance(m)) answeredLater.add(m.tool_call_id);
    }
    for (let i = 0; i < cut; i++) {
      const m = messages[i];
      if (AIMessage.isInstance(m) && (m.tool_calls ?? []).some((c) => c.id !== undefined && answeredLater.has(c.id))) {
        cut = i;
        changed = true;
        break;
      }
    }
  }
  const firstHuman = messages.findIndex((m) => HumanMessage.isInstance(m));
  const keepFirstHuman = firstHuman >= 0 && firstHuman < cut && countTokens([messages[firstHuman] as BaseMessage]) <= firstHumanBudget;
  const summarize = messages.slice(0, cut).filter((m, i) => !(keepFirstHuman && i === firstHuman) && !SystemMessage.isInstance(m));
  return summarize.length === 0 ? null : { summarize, cut, keptFirst: keepFirstHuman ? firstHuman : undefined };
}

/** One line per message, as the summarizer model reads it, in at most `maxChars` characters. */
function transcript(messages: readonly BaseMessage[], maxChars: number): string {
  const lines: string[] = [];
  for (const m of messages) {
    const text = clip(renderContent(m), MAX_CHARS_PER_MESSAGE);
    if (HumanMessage.isInstance(m)) lines.push(`[user] ${text}`);
    else if (ToolMessage.isInstance(m)) lines.push(`[tool ${m.name ?? "result"}${m.status === "error" ? " (error)" : ""}] ${text}`);
    else if (AIMessage.isInstance(m)) {
      if (text) lines.push(`[assistant] ${text}`);
      for (const call of m.tool_calls ?? []) lines.push(`[assistant calls ${call.name}] ${clip(JSON.stringify(call.args), 500)}`);
    } else lines.push(`[${m.type}] ${text}`);
  }
  // Over the bound, the oldest lines go: the previous summary already covers what came before them.
  let total = 0;
  let start = lines.length;
  while (start > 0 && total + (lines[start - 1] as string).length + 1 <= maxChars) total += (lines[--start] as string).length + 1;
  const omitted = start > 0 ? [`(${start} older messages omitted)`] : [];
  return [...omitted, ...lines.slice(start)].join("\n");
}

const SUMMARIZER_INSTRUCTIONS = (maxChars: number) =>
  [
    "You compress the earlier part of a conversation between a user and an AI agent, so that the agent can carry on without those messages.",
    `Write a plain-text summary of at most ${maxChars} characters. Keep: facts learned, decisions made and their reasons, file paths, names and identifiers exactly as written, work done and its results, and open questions or unfinished work.`,
    "Drop pleasantries and verbatim tool output. If a previous summary is given, your summary replaces it: carry over everything from it that still matters.",
    "Reply with the summary only.",
  ].join("\n");

/** Paths worth keeping verbatim: absolute paths of two or more segments (not URLs) and relative paths with an extension. */
function mentionedPaths(messages: readonly BaseMessage[]): string[] {
  const found = new Set<string>();
  const pattern = /(?<![\w:/.])(?:\/[\w.@-]+){2,}|(?<![\w:/.])[\w.-]+(?:\/[\w.@-]+)+\.\w{1,8}\b/g;
  for (const m of messages) {
    const text = `${renderContent(m)} ${AIMessage.isInstance(m) ? JSON.stringify(m.tool_calls ?? []) : ""}`;
    for (const match of text.matchAll(pattern)) found.add(match[0]);
  }
  return [...found];
}

/**
 * The summary when no model is configured or the model failed: deterministic, bounded by `maxChars`, made
 * of the previous summary, the paths mentioned, and one clipped line per message (oldest lines dropped
 * first when over budget, the first line kept as it usually states the task).
 */
export function extractiveSummary(previous: string | undefined, messages: readonly BaseMessage[], maxChars: number): string {
  const parts: string[] = [];
  if (previous) parts.push(`Earlier summary:\n${clip(previous, Math.floor(maxChars * 0.4), false)}`);
  const paths = mentionedPaths(messages);
  if (paths.length > 0) parts.push(clip(`Files mentioned: ${paths.join(", ")}`, Math.floor(maxChars * 0.15)));
  const lines: string[] = [];
  for (const m of messages) {
    const text = renderContent(m);
    if (HumanMessage.isInstance(m)) lines.push(`- User: ${clip(text, 300)}`);
    else if (ToolMessage.isInstance(m))
      lines.push(`- ${m.name ?? "tool"} ${m.status === "error" ? "failed" : "returned"}: ${clip(text, 120)}`);
    else if (AIMessage.isInstance(m)) {
      if (text.trim()) lines.push(`- Assistant: ${clip(text, 200)}`);
      for (const call of m.tool_calls ?? []) lines.push(`- Assistant called ${call.name}(${clip(JSON.stringify(call.args), 120)})`);
    }
  }
  const header = "Earlier messages (extract):";
  let room = maxChars - parts.reduce((n, p) => n + p.length + 1, 0) - header.length - 1;
  const kept: string[] = [];
  const first = lines[0];
  if (first !== undefined && first.length + 1 <= room) {
    kept.push(first);
    room -= first.length + 1;
  }
  const tail: string[] = [];
  const marker = 40; // room for the "(n messages omitted)" line
  for (let i = lines.length - 1; i >= 1; i--) {
    const line = lines[i] as string;
    if (line.length + 1 > room - marker) break;
    tail.unshift(line);
    room -= line.length + 1;
  }
  const omitted = lines.length - kept.length - tail.length;
  if (omitted > 0) kept.push(`- (${omitted} messages omitted)`);
  kept.push(...tail);
  if (kept.length > 0) parts.push(`${header}\n${kept.join("\n")}`);
  const summary = parts.join("\n");
  return summary.length <= maxChars ? summary : `${summary.slice(0, maxChars - 1)}…`;
}

function positive(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `summarization.${name} must be a number ≥ ${min}, got ${String(value)}`, {
      where: `summarization.${name}`,
    });
  }
  return value;
}

/**
 * Keeps a long thread's prompt within budget: when what the model would be sent grows over the trigger, the older
 * messages are folded into `summary_text` (which covers the previous summary too) and the cut is recorded in
 * state (`_summary`). The thread keeps every message (history, `GET /state` and the console show them all); only
 * the model's requests start at the cut, with the summary at the end of their system prompt. Every check reads
 * the messages after the cut, never the whole thread.
 */
export function summarizationMiddleware(options: SummarizationOptions = {}): MiddlewareSpec {
  const triggerTokens = positive("triggerTokens", options.triggerTokens ?? 12_000, 1);
  const triggerMessages = options.triggerMessages === undefined ? undefined : positive("triggerMessages", options.triggerMessages, 1);
  const keepMessages = positive("keepMessages", options.keepMessages ?? 10, 0);
  const targetTokens = positive("targetTokens", options.targetTokens ?? Math.floor(triggerTokens * 0.6), 1);
  if (targetTokens >= triggerTokens) {
    throw new AntlerError(
      ErrorCodes.CONFIG_INVALID,
      `summarization.targetTokens (${targetTokens}) must be below triggerTokens (${triggerTokens})`,
      { where: "summarization.targetTokens", hint: "Leave it out for 60% of the trigger, or pick a smaller value." },
    );
  }
  const maxSummaryChars = positive("maxSummaryChars", options.maxSummaryChars ?? 4000, 200);
  const countTokens = options.tokenCounter ?? approximateTokenCount;
  // The summarizer's own prompt must fit the model too: its transcript is held to about the trigger's size.
  const transcriptChars = Math.min(MAX_TRANSCRIPT_CHARS, triggerTokens * 4);
  const { model, logger } = options;

  async function summarizeWithModel(
    previous: string | undefined,
    messages: readonly BaseMessage[],
    signal: AbortSignal | undefined,
  ): Promise<string> {
    if (!model) return "";
    const body = `${previous ? `<previous_summary>\n${previous}\n</previous_summary>\n\n` : ""}<conversation>\n${transcript(messages, transcriptChars)}\n</conversation>`;
    // "nostream" keeps the summarizer's tokens out of the run's message stream: the user did not ask for them.
    const reply = await model.invoke([new SystemMessage(SUMMARIZER_INSTRUCTIONS(maxSummaryChars)), new HumanMessage(body)], {
      tags: ["nostream"],
      ...(signal ? { signal } : {}),
    });
    const text = reply.text.trim();
    return text.length <= maxSummaryChars ? text : `${text.slice(0, maxSummaryChars - 1)}…`;
  }

  return {
    name: "Summarization",
    state: { [SUMMARY_CUT_FIELD]: summaryCutSchema.optional() },
    async beforeModel(state, runtime) {
      const messages = state.messages;
      const view = viewAfterSummary(messages, summaryCutOf(state));
      const visible = view.visible;
      const previous = typeof state.summary_text === "string" && state.summary_text !== "" ? state.summary_text : undefined;
      const overMessages = triggerMessages !== undefined && visible.length > triggerMessages;
      const summaryTokens = previous ? Math.ceil(previous.length / 4) : 0;
      if (!overMessages && countTokens(visible) + summaryTokens <= triggerTokens) return undefined;
      const plan = planSummarization(visible, keepMessages, Math.floor(triggerTokens / 2), countTokens, targetTokens);
      if (!plan) return undefined;
      let summary = "";
      try {
        summary = await summarizeWithModel(previous, plan.summarize, runtime.signal);
      } catch (err) {
        if (runtime.signal?.aborted) throw err;
        // The error's type only: its message may quote the conversation or a provider URL with credentials.
        logger?.warn(
          { middleware: "Summarization", error_type: err instanceof Error ? err.name : typeof err },
          "summarizer model failed; using the extractive summary",
        );
      }
      if (!summary) summary = extractiveSummary(previous, plan.summarize, maxSummaryChars);
      return { summary_text: summary, [SUMMARY_CUT_FIELD]: nextCut(messages, view, plan) };
    },
    wrapModelCall(request, handler) {
      const summary = request.state.summary_text;
      if (typeof summary !== "string" || summary === "") return handler(request);
      const block = `<${SUMMARY_TAG}>\nThe earlier part of this conversation was summarized to save context; those messages are not repeated here. Treat this as what happened before the messages that follow.\n${summary}\n</${SUMMARY_TAG}>`;
      const current = request.systemMessage;
      const systemMessage = current.text === "" ? new SystemMessage(block) : current.concat(`\n\n${block}`);
      // Threads summarized before the cut was recorded had their older messages removed: they are sent whole.
      const messages = messagesAfterSummary(request.messages, summaryCutOf(request.state));
      return handler({ ...request, systemMessage, messages: messages as BaseMessage[] });
    },
  };
}

/** The cut after `plan`, in positions of the whole thread (the plan's are positions in `view.visible`). */
function nextCut(messages: readonly BaseMessage[], view: SummaryView, plan: SummarizationPlan): SummaryCut {
  const lead = view.firstAt >= 0 ? 1 : 0;
  const toThread = (i: number) => (i < lead ? view.firstAt : view.from + (i - lead));
  const from = toThread(Math.max(plan.cut, lead));
  const cut: SummaryCut = { from };
  const fromId = messages[from]?.id;
  if (fromId) cut.from_id = fromId;
  if (plan.keptFirst !== undefined) {
    const first = toThread(plan.keptFirst);
    if (first < from) {
      cut.first = first;
      const firstId = messages[first]?.id;
      if (firstId) cut.first_id = firstId;
    }
  }
  return cut;
}
