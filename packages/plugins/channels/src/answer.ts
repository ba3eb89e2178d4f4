import { randomUUID } from "node:crypto";
import { basename } from "node:path";
import { ErrorCodes } from "@antler/kernel";
import { RUN_PAUSED_EVENT, type RunRecord, type StreamEvent } from "@antler/plugin-runtime";
import type { OutboundButton } from "./contract.js";
import type { EventContext } from "./event-context.js";
import { splitText } from "./outbound.js";

/**
 * The question whose buttons are live in a conversation: a clarification (a press maps `c:<index>` back to the
 * option), or an approval pause (`approval` set: `a:approve` / `a:reject` resume that run).
 */
export interface PendingQuestion {
  message_id: string;
  question: string;
  options: string[];
  approval?: { run_id: string } | undefined;
}

/** One call an approval pause waits on, as the guardrails' interrupt lists it. */
interface PendingCall {
  tool_call_id?: string;
  tool: string;
  args?: unknown;
  reason?: string;
}

/** The button values of an approval question. */
export const APPROVE_VALUE = "a:approve";
export const REJECT_VALUE = "a:reject";

interface Turn {
  threadId: string;
  userId: string;
  agent: string | null;
  model: string | null;
  text: string;
}

interface HumanInput {
  question?: string;
  context?: string;
  options?: string[];
}

/** What the run produced, read from its events. */
interface RunOutput {
  /** Text of the newest AI message. */
  text: string;
  /** Tool calls, compactly, in order. */
  tools: string[];
  question: { text: string; input: HumanInput } | undefined;
  artifactsBefore: string[] | undefined;
  artifactsAfter: string[];
  /** The run paused for approval of these calls (the `run_paused` event). */
  pause?: { runId: string; calls: PendingCall[] } | undefined;
  /** The id of the AI message `text` is from: a new message starts a new text. */
  aiId?: string | undefined;
}

const MAX_TOOLS_SHOWN = 6;

/** The live message's text while the run streams: tool calls compactly, then the answer so far. */
function liveText(output: RunOutput, showTools: boolean): string {
  const tools =
    showTools && output.tools.length > 0
      ? output.tools
          .slice(-MAX_TOOLS_SHOWN)
          .map((t) => `⚙ ${t}`)
          .join("\n")
      : "";
  const body = output.text === "" ? "…" : `${output.text} …`;
  return tools === "" ? body : `${tools}\n\n${body}`;
}

/**
 * Runs the agent on the conversation's thread and answers: a live message edited at most once per
 * `stream.edit_interval_ms` (edits that hit a rate limit are skipped), then the final text, clarification choices
 * as buttons, and the files the run presented. The run id is journaled before the run starts, so after a crash a
 * finished run is answered from its thread instead of being run again.
 */
export async function answerWithRun(ctx: EventContext, turn: Turn): Promise<void> {
  const { runtime, provider, message, row } = ctx;
  const { client, config, store, logger } = runtime;
  const output = emptyOutput();
  const previous = row.run_id ? await settledRun(ctx, turn, row.run_id) : undefined;
  if (previous?.status === "success") {
    // Answered by a run that finished before this instance died: send its answer, never run it again.
    logger.info({ run_id: previous.run_id, event_id: row.event_id }, "channel event's run already finished; answering from it");
    const state = await client.getThreadState(turn.threadId, { userId: turn.userId });
    readFinalState(state.values as Record<string, unknown>, output);
  } else if (previous?.status === "paused" && previous.interrupt) {
    // It paused for approval before this instance died: ask again, never run it again.
    output.pause = pauseOf(previous.run_id, previous.interrupt.value);
  } else {
    const runId = randomUUID();
    await store.update(row.id, { run_id: runId, thread_id: turn.threadId });
    const events = client.stream(turn.text, {
      threadId: turn.threadId,
      userId: turn.userId,
      runId,
      traceId: row.trace_id,
      multitaskStrategy: "enqueue",
      ...((turn.agent ?? config.agent) ? { agent: (turn.agent ?? config.agent) as string } : {}),
      ...((turn.model ?? config.model) ? { model: (turn.model ?? config.model) as string } : {}),
      metadata: { channel: provider.id, channel_event_id: row.event_id, channel_chat_id: message.chat.id },
    });
    await streamAnswer(ctx, turn, events, output);
    return;
  }
  await sendFinal(ctx, output, await store.outboxGet(`${row.id}#live`), turn.userId);
  await sendFiles(ctx, turn, output);
}

/** How long a recovered event waits for its run, still running elsewhere, before giving up on it. */
const SETTLE_TIMEOUT_MS = 10 * 60_000;
const SETTLE_POLL_MS = 250;

/**
 * The record of the run an event started before a crash, once it has settled. A run still pending or running is
 * being continued by the instance that took it over (durable runs): wait for it instead of starting the turn a
 * second time, which would run the model again and add the user's message twice. Undefined when there is no such
 * run, or it did not settle in time (then the turn runs again, as before takeover existed).
 */
async function settledRun(ctx: EventContext, turn: Turn, runId: string): Promise<RunRecord | undefined> {
  const { client, logger } = ctx.runtime;
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let logged = false;
  for (;;) {
    const record = await client.getRun(turn.threadId, runId, { userId: turn.userId }).catch(() => undefined);
    if (!record || (record.status !== "pending" && record.status !== "running")) return record;
    if (Date.now() > deadline) {
      logger.warn({ run_id: runId, event_id: ctx.row.event_id }, "channel event's run did not settle; running the turn again");
      return undefined;
    }
    if (!logged) {
      logger.info({ run_id: runId, event_id: ctx.row.event_id }, "channel event's run is still going (taken over); waiting for it");
      logged = true;
    }
    await new Promise((done) => setTimeout(done, SETTLE_POLL_MS));
  }
}

/**
 * Resumes a run paused for approval with the user's decision (a button press or a typed approve / reject) and
 * streams the rest of its answer like a new run: the same run id and trace id. After a crash, a resume that
 * finished is answered from the thread; a run no longer paused is not resumed twice.
 */
export async function answerWithResume(
  ctx: EventContext,
  turn: Omit<Turn, "text">,
  runId: string,
  decision: { decision: "approve" | "reject"; reason?: string },
): Promise<void> {
  const { runtime, row } = ctx;
  const { client, store, logger } = runtime;
  const output = emptyOutput();
  const record = await client.getRun(turn.threadId, runId, { userId: turn.userId }).catch(() => undefined);
  // `row.run_id` is this run when the event was taken before (a crash): a finished run is answered from its thread.
  const retaken = row.run_id === runId;
  if (record?.status !== "paused") {
    if (record?.status === "success" && retaken) {
      const state = await client.getThreadState(turn.threadId, { userId: turn.userId });
      readFinalState(state.values as Record<string, unknown>, output);
      await sendFinal(ctx, output, await store.outboxGet(`${row.id}#live`), turn.userId);
      return;
    }
    await ctx.reply(`That approval is no longer open (the run is ${record?.status ?? "gone"}).`, "approval-closed");
    return;
  }
  await store.update(row.id, { run_id: runId, thread_id: turn.threadId });
  logger.info({ run_id: runId, event_id: row.event_id, decision: decision.decision }, "channel approval answered; resuming the run");
  await streamAnswer(ctx, { ...turn, text: "" }, client.resumeStream(turn.threadId, runId, decision, { userId: turn.userId }), output);
}

function emptyOutput(): RunOutput {
  return { text: "", tools: [], question: undefined, artifactsBefore: undefined, artifactsAfter: [] };
}

/** The live message while `events` stream (edited at a bounded rate), then the final answer and the files. */
async function streamAnswer(ctx: EventContext, turn: Turn, events: AsyncIterable<StreamEvent>, output: RunOutput): Promise<void> {
  const { runtime, provider, message, row, out } = ctx;
  const { config, store, logger } = runtime;
  const caps = provider.capabilities;
  let liveId = caps.edits ? await store.outboxGet(`${row.id}#live`) : undefined;
  let lastEdit = 0;
  let editing: Promise<void> | undefined;
  let holdUntil = 0;
  const refresh = () => {
    if (!caps.edits || editing) return;
    const now = Date.now();
    if (now - lastEdit < config.stream.edit_interval_ms || now < holdUntil) return;
    lastEdit = now;
    const text = liveText(output, config.stream.show_tools).slice(0, caps.maxTextLength);
    editing = (async () => {
      try {
        if (liveId === undefined) liveId = (await out.send(`${row.id}#live`, message.chat, { text })).messageId;
        else await provider.edit?.(message.chat, liveId, { text });
      } catch (err) {
        // A live edit is never worth waiting for: skip it, and hold off as long as the platform asked.
        const retryAfterMs = (err as { retryAfterMs?: unknown }).retryAfterMs;
        if (typeof retryAfterMs === "number") holdUntil = Date.now() + retryAfterMs;
        logger.debug({ err }, "live message update skipped");
      } finally {
        editing = undefined;
      }
    })();
  };
  if (caps.edits) void provider.typing?.(message.chat, message).catch(() => {});
  try {
    for await (const event of events) if (readEvent(event, output)) refresh();
  } catch (err) {
    if ((err as { code?: unknown })?.code !== ErrorCodes.RUN_CANCELLED) throw err;
    // Stopped with /cancel (or by another client): say so where the answer was going.
    await editing;
    const text = output.text.trim() === "" ? "Cancelled." : `${output.text}\n\n(cancelled)`;
    if (liveId !== undefined) await out.edit(message.chat, liveId, { text });
    else await ctx.reply(text, "final:0");
    return;
  }
  await editing;
  if (liveId !== undefined) await store.outboxPut(`${row.id}#live`, liveId);
  // A live edit the platform rate-limited: the final edit of the same message waits out its Retry-After first.
  const holdMs = Math.min(holdUntil - Date.now(), 300_000);
  if (liveId !== undefined && holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
  await sendFinal(ctx, output, liveId, turn.userId);
  await sendFiles(ctx, turn, output);
}

/** An approval interrupt's calls, as the question put to the user. */
function pauseOf(runId: string, interrupt: Record<string, unknown>): NonNullable<RunOutput["pause"]> {
  const calls = Array.isArray(interrupt.calls) ? (interrupt.calls as PendingCall[]) : [];
  return { runId, calls };
}

/** The approval question: each pending call compactly, with the rule's reason. */
function approvalText(pause: NonNullable<RunOutput["pause"]>, typed: boolean): string {
  const lines = pause.calls.map((call) => {
    const args = JSON.stringify(call.args ?? {});
    const shown = args.length > 200 ? `${args.slice(0, 200)}…` : args;
    return `• \`${call.tool}\` ${shown}${call.reason ? ` (${call.reason})` : ""}`;
  });
  const ask = typed ? "Reply `approve`, or `reject: <reason>`." : "Approve or reject?";
  return [`Approval needed before ${pause.calls.length === 1 ? "this call runs" : "these calls run"}:`, ...lines, "", ask].join("\n");
}

/** Folds one run event into the output; true when the live message would change. */
function readEvent(event: StreamEvent, output: RunOutput): boolean {
  if (event.type === "messages-tuple") {
    const data = event.data;
    if (data.type === "ai") {
      if ("tool_calls" in data && data.tool_calls) {
        for (const call of data.tool_calls) output.tools.push(call.name);
        return true;
      }
      if (data.content !== "") {
        if (data.id !== output.aiId) output.text = "";
        output.aiId = data.id;
        output.text += data.content;
        return true;
      }
      return false;
    }
    if (data.name === "ask_clarification" && data.status === "success") {
      const input = (data.artifact as { human_input?: HumanInput } | undefined)?.human_input ?? {};
      output.question = { text: data.content, input };
    }
    return false;
  }
  if (event.type === "values") {
    readFinalState(event.data as unknown as Record<string, unknown>, output);
  }
  if (event.type === "custom") {
    const data = event.data as { type?: unknown; run_id?: unknown; interrupt?: { kind?: unknown } & Record<string, unknown> };
    if (data.type === RUN_PAUSED_EVENT && data.interrupt?.kind === "approval" && typeof data.run_id === "string") {
      output.pause = pauseOf(data.run_id, data.interrupt);
    }
  }
  return false;
}

/** Reads the newest AI text, the artifacts and a closing clarification from a state snapshot. */
function readFinalState(values: Record<string, unknown>, output: RunOutput): void {
  const artifacts = Array.isArray(values.artifacts) ? (values.artifacts as string[]) : [];
  output.artifactsBefore ??= artifacts;
  output.artifactsAfter = artifacts;
  const messages = Array.isArray(values.messages) ? (values.messages as Record<string, unknown>[]) : [];
  const lastHuman = messages.map((m) => m.type).lastIndexOf("human");
  const turn = messages.slice(lastHuman + 1);
  const lastAi = turn.filter((m) => m.type === "ai" && typeof m.content === "string" && m.content !== "").at(-1);
  if (lastAi) output.text = lastAi.content as string;
  const last = turn.at(-1);
  if (last?.type === "tool" && last.name === "ask_clarification" && last.status !== "error") {
    const input = (last.artifact as { human_input?: HumanInput } | undefined)?.human_input ?? {};
    output.question = { text: String(last.content ?? ""), input };
  }
}

async function sendFinal(ctx: EventContext, output: RunOutput, liveId: string | undefined, userId: string): Promise<void> {
  const { provider, message, out, runtime } = ctx;
  const caps = provider.capabilities;
  const question = output.question;
  const options = question?.input.options ?? [];
  const withButtons = question !== undefined && options.length > 0 && caps.buttons;
  let text: string;
  let buttons: OutboundButton[][] | undefined;
  const pause = output.pause;
  if (pause) {
    const said = output.text.trim();
    text = said === "" ? approvalText(pause, !caps.buttons) : `${said}\n\n${approvalText(pause, !caps.buttons)}`;
    if (caps.buttons) {
      buttons = [
        [
          { label: "Approve", value: APPROVE_VALUE, style: "primary" },
          { label: "Reject", value: REJECT_VALUE, style: "danger" },
        ],
      ];
    }
  } else if (withButtons) {
    const parts = [question.input.context, question.input.question].filter((p): p is string => !!p && p.trim() !== "");
    text = parts.join("\n\n") || question.text;
    buttons = options.map((option, i) => [{ label: option.slice(0, 60), value: `c:${i}` }]);
  } else if (question) {
    text = question.text;
  } else {
    text = output.text.trim() === "" ? "(no answer)" : output.text;
  }
  const pieces = splitText(text, caps.maxTextLength);
  let questionId: string;
  if (liveId !== undefined && caps.edits) {
    // The live message becomes the answer's first piece; further pieces follow as new messages.
    await out.edit(message.chat, liveId, { text: pieces[0] as string, ...(pieces.length === 1 && buttons ? { buttons } : {}) });
    questionId = liveId;
    for (let i = 1; i < pieces.length; i++) {
      const last = i === pieces.length - 1;
      questionId = await ctx.reply(pieces[i] as string, `final:${i}`, last && buttons ? { buttons } : {});
    }
  } else {
    questionId = "";
    for (let i = 0; i < pieces.length; i++) {
      const last = i === pieces.length - 1;
      questionId = await ctx.reply(pieces[i] as string, `final:${i}`, last && buttons ? { buttons } : {});
    }
  }
  if ((question !== undefined && options.length > 0) || pause) {
    // A question with options is remembered with or without buttons: without them it is a numbered list, and a
    // typed number answers it.
    const conversation = await runtime.store.conversation(provider.id, message.chat, userId);
    if (conversation) {
      const pending: PendingQuestion = pause
        ? { message_id: questionId, question: text, options: [], approval: { run_id: pause.runId } }
        : { message_id: questionId, question: text, options };
      await runtime.store.saveConversation(provider.id, message.chat, userId, {
        thread_id: conversation.thread_id,
        pending_question: JSON.stringify(pending),
      });
    }
  }
}

/** Sends the files the run presented (artifacts that were not there when it started). */
async function sendFiles(ctx: EventContext, turn: Turn, output: RunOutput): Promise<void> {
  const { provider, message, row, out, runtime } = ctx;
  if (!provider.capabilities.files || !provider.sendFile) return;
  const before = new Set(output.artifactsBefore ?? []);
  for (const path of output.artifactsAfter.filter((p) => !before.has(p))) {
    const artifact = await runtime.client.getArtifact(turn.threadId, path, { userId: turn.userId });
    await out.sendFile(`${row.id}#file:${path}`, message.chat, {
      name: basename(path),
      bytes: artifact.bytes,
      mimeType: artifact.mimeType,
    });
  }
}
