import { randomUUID } from "node:crypto";
import {
  type AgentApp,
  type AgentContext,
  agent,
  PROTOCOL_VERSION,
  type PromptResponse,
  RequestError,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { ErrorCodes, isAntlerError, type Logger } from "@antler/kernel";
import { RunEventMapper } from "@antler/plugin-protocols/run-events";
import { type AntlerClient, RUN_PAUSED_EVENT, type StreamEvent } from "@antler/plugin-runtime";
import { MODEL_META_KEY, TRACE_META_KEY } from "./acp-turn.js";
import { AcpUpdateEncoder, acpStopReason, historyUpdates, planEntries, promptText, toolKind, toolTitle } from "./agent-updates.js";
import type { EditorBridge } from "./editor-bridge.js";

/** Key of the Antler run id in a prompt response's `_meta`. */
export const RUN_META_KEY = "antler/run_id";
/** Thread metadata key holding the working directory the ACP client gave for the session. */
export const CWD_METADATA_KEY = "acp_cwd";

const THREAD_NOT_FOUND = "ANTLER_ERR_THREAD_NOT_FOUND";
/** Threads read per `session/list` page. */
const LIST_PAGE = 50;
/** Messages read per page when `session/load` replays a thread, so a long thread is never held whole. */
const HISTORY_PAGE = 200;

export interface AcpAgentOptions {
  client: AntlerClient;
  /** Every session is a thread of this user. */
  userId: string;
  /** A custom agent (`antler agents list`) to run instead of the lead agent. */
  agent?: string | undefined;
  /** A `models:` name for every run; default the agent's or the config's default model. */
  model?: string | undefined;
  logger: Logger;
  version: string;
  /** Where the editor tools find this connection and its sessions' folders. */
  editor?: EditorBridge | undefined;
}

interface Session {
  readonly threadId: string;
  cwd: string;
  /** Tools the editor answered `allow_always` for in this session: approved without asking again. */
  readonly alwaysAllowed: Set<string>;
  /** The prompt turn in flight: one per session at a time. */
  turn?: { readonly controller: AbortController; readonly runId: string };
}

/**
 * Antler as an ACP agent: sessions are threads of one user, a prompt turn is one run through the embedded
 * `AntlerClient`, its events reach the client as `session/update`s. One app per connection (its sessions are
 * the ones created or loaded on that connection, as ACP scopes them).
 */
export function createAcpAgent(options: AcpAgentOptions): AgentApp {
  const { client, userId, logger, editor } = options;
  const sessions = new Map<string, Session>();

  const session = (sessionId: string): Session => {
    const found = sessions.get(sessionId);
    if (!found) throw RequestError.sessionNotFound(sessionId);
    return found;
  };

  return agent({ name: "antler" })
    .onConnect((connection) => {
      editor?.attach(connection.client);
      void connection.closed.then(() => editor?.detach());
    })
    .onRequest("initialize", ({ params }) => {
      editor?.setCapabilities(params.clientCapabilities);
      logger.debug({ client: params.clientInfo?.name, protocol_version: params.protocolVersion }, "ACP client connected");
      return {
        protocolVersion: PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: false, audio: false, embeddedContext: true },
          // Antler runs with its own configured MCP servers; the client's are not taken (see the README).
          mcpCapabilities: { http: false, sse: false },
          sessionCapabilities: { list: {} },
        },
        agentInfo: { name: "antler", title: "Antler", version: options.version },
        authMethods: [],
      };
    })
    .onRequest("session/new", async ({ params }) => {
      if (params.mcpServers.length > 0) ignoredMcpServers(logger, params.mcpServers.length);
      const thread = await client
        .createThread({ userId, metadata: { [CWD_METADATA_KEY]: params.cwd, source: "acp" } })
        .catch((err: unknown) => Promise.reject(toRequestError(err)));
      sessions.set(thread.thread_id, { threadId: thread.thread_id, cwd: params.cwd, alwaysAllowed: new Set() });
      editor?.openSession(thread.thread_id, params.cwd);
      const hint = params._meta?.[MODEL_META_KEY];
      if (typeof hint === "string")
        logger.debug({ thread_id: thread.thread_id, hint }, "ACP model hint ignored: runs use --model or the config");
      return { sessionId: thread.thread_id };
    })
    .onRequest("session/load", async ({ params, client: peer }) => {
      const threadId = params.sessionId;
      let first: Awaited<ReturnType<AntlerClient["getThread"]>>;
      try {
        first = await client.getThread(threadId, { userId, messages: { limit: 0 } });
      } catch (err) {
        if (isAntlerError(err, THREAD_NOT_FOUND) || isAntlerError(err, ErrorCodes.PATH_UNSAFE))
          throw RequestError.sessionNotFound(threadId);
        throw toRequestError(err);
      }
      if (params.mcpServers.length > 0) ignoredMcpServers(logger, params.mcpServers.length);
      await client.updateThread(threadId, { userId, metadata: { [CWD_METADATA_KEY]: params.cwd } });
      // Replayed oldest first, a page at a time, before the response, as ACP asks.
      for (let start = 0; start < first.messages_total; start += HISTORY_PAGE) {
        const page = await client.getThread(threadId, {
          userId,
          messages: { limit: HISTORY_PAGE, before: Math.min(start + HISTORY_PAGE, first.messages_total) },
        });
        await send(peer, threadId, historyUpdates(page.messages));
      }
      const plan = planEntries(first.todos);
      if (plan.length > 0) await send(peer, threadId, [{ sessionUpdate: "plan", entries: plan }]);
      if (first.title) await send(peer, threadId, [{ sessionUpdate: "session_info_update", title: first.title }]);
      sessions.set(threadId, { threadId, cwd: params.cwd, alwaysAllowed: new Set() });
      editor?.openSession(threadId, params.cwd);
      return {};
    })
    .onRequest("session/list", async ({ params }) => {
      const offset = params.cursor ? Number(params.cursor) : 0;
      if (!Number.isInteger(offset) || offset < 0)
        throw RequestError.invalidParams({ cursor: params.cursor }, "unknown cursor; pass a nextCursor from session/list");
      const page = await client
        .listThreads({ userId, limit: LIST_PAGE, offset })
        .catch((err: unknown) => Promise.reject(toRequestError(err)));
      // Only threads that are ACP sessions have a cwd; a page may hold none of them and still have a next one.
      const sessions = page.flatMap((thread) => {
        const cwd = thread.metadata[CWD_METADATA_KEY];
        if (typeof cwd !== "string" || (params.cwd && cwd !== params.cwd)) return [];
        return [{ sessionId: thread.thread_id, cwd, title: thread.title, updatedAt: thread.updated_at }];
      });
      return { sessions, ...(page.length === LIST_PAGE ? { nextCursor: String(offset + LIST_PAGE) } : {}) };
    })
    .onNotification("session/cancel", ({ params }) => {
      const turn = sessions.get(params.sessionId)?.turn;
      if (!turn) return;
      logger.info({ thread_id: params.sessionId, run_id: turn.runId }, "ACP session/cancel: cancelling the run");
      turn.controller.abort("cancelled by the ACP client (session/cancel)");
    })
    .onRequest("session/prompt", async ({ params, client: peer, signal }) => {
      const current = session(params.sessionId);
      if (current.turn) {
        throw RequestError.invalidRequest(
          { sessionId: params.sessionId, runId: current.turn.runId },
          "a prompt turn is already running in this session; wait for it or send session/cancel",
        );
      }
      const prompt = promptText(params.prompt);
      if (!prompt.ok) throw RequestError.invalidParams({ sessionId: params.sessionId }, prompt.message);
      const traceMeta = params._meta?.[TRACE_META_KEY];
      const turn = { controller: new AbortController(), runId: randomUUID() };
      current.turn = turn;
      try {
        return await runTurn(peer, current, prompt.text, {
          ...options,
          runId: turn.runId,
          traceId: typeof traceMeta === "string" ? traceMeta : undefined,
          // The JSON-RPC request's own signal aborts too: `$/cancel_request`, or the connection closing.
          signal: AbortSignal.any([turn.controller.signal, signal]),
        });
      } finally {
        current.turn = undefined;
      }
    });
}

interface TurnOptions extends AcpAgentOptions {
  runId: string;
  traceId: string | undefined;
  signal: AbortSignal;
}

async function runTurn(peer: AgentContext, session: Session, message: string, options: TurnOptions): Promise<PromptResponse> {
  const { client, userId, signal, runId, logger } = options;
  const threadId = session.threadId;
  let events: AsyncIterable<StreamEvent> = client.stream(message, {
    threadId,
    userId,
    runId,
    signal,
    ...(options.traceId ? { traceId: options.traceId } : {}),
    ...(options.agent ? { agent: options.agent } : {}),
    ...(options.model ? { model: options.model } : {}),
    metadata: { source: "acp", acp_cwd: session.cwd },
  });
  const encoder = new AcpUpdateEncoder({ holdStart: approvalOn(client) });
  const cancelled = (): PromptResponse => {
    logger.info({ thread_id: threadId, run_id: runId }, "ACP prompt turn cancelled");
    return { stopReason: "cancelled", _meta: { [RUN_META_KEY]: runId } };
  };
  // One run; each approval pause asks the editor and resumes the same run into the same prompt turn.
  for (;;) {
    const mapper = new RunEventMapper({ runId, threadId, traceId: options.traceId ?? "" });
    let end: Extract<StreamEvent, { type: "end" }>["data"] | undefined;
    let pending: PendingCall[] = [];
    try {
      for await (const event of events) {
        if (event.type === "end") end = event.data;
        if (event.type === "custom" && event.data.type === RUN_PAUSED_EVENT) pending = pendingCalls(event.data.interrupt);
        for (const protocolEvent of mapper.map(event)) await send(peer, threadId, encoder.encode(protocolEvent));
      }
    } catch (err) {
      if (signal.aborted) return cancelled();
      logger.warn({ err, thread_id: threadId, run_id: runId }, "ACP prompt turn failed");
      throw toRequestError(err);
    }
    if (!end) throw RequestError.internalError({ runId }, "the run ended without an end event");
    if (end.stop_reason !== "paused") {
      return {
        stopReason: acpStopReason(end.stop_reason),
        _meta: { [RUN_META_KEY]: end.run_id, [TRACE_META_KEY]: end.trace_id },
      };
    }
    const decisions = await askEditor(peer, session, pending, signal, logger, { runId, traceId: end.trace_id });
    if (signal.aborted) {
      // Nothing runs a paused run: ending its record is the cancel.
      await client.cancelRun(threadId, runId, { userId }).catch((err: unknown) => {
        logger.warn({ err, thread_id: threadId, run_id: runId }, "cancelling the paused run failed");
      });
      return cancelled();
    }
    await send(peer, threadId, encoder.decided(decisions));
    const resume = {
      decisions: Object.fromEntries(
        [...decisions].map(([id, d]) => [id, d.approved ? { decision: "approve" } : { decision: "reject", reason: d.reason }]),
      ),
    };
    events = client.resumeStream(threadId, runId, resume, { userId, signal });
  }
}

/** A call the paused run waits on, as the runtime's `run_paused` event lists it. */
interface PendingCall {
  toolCallId: string;
  tool: string;
  args: Record<string, unknown>;
  rule?: string;
  reason?: string;
}

function pendingCalls(interrupt: unknown): PendingCall[] {
  const calls = (interrupt as { calls?: unknown } | null | undefined)?.calls;
  if (!Array.isArray(calls)) return [];
  return calls.flatMap((call): PendingCall[] => {
    const c = call as Record<string, unknown>;
    if (typeof c.tool_call_id !== "string" || typeof c.tool !== "string") return [];
    const args = c.args !== null && typeof c.args === "object" ? (c.args as Record<string, unknown>) : {};
    return [
      {
        toolCallId: c.tool_call_id,
        tool: c.tool,
        args,
        ...(typeof c.rule === "string" ? { rule: c.rule } : {}),
        ...(typeof c.reason === "string" ? { reason: c.reason } : {}),
      },
    ];
  });
}

const ALLOW_ONCE = "allow_once";
const ALLOW_ALWAYS = "allow_always";
const REJECT_ONCE = "reject_once";

type Decision = { approved: boolean; reason?: string };

/**
 * One `session/request_permission` per pending call, in order; a tool the editor allowed always in this session
 * is approved without asking. A cancelled outcome, an error answer or an unknown option rejects the call with a
 * reason the model reads. Stops asking once the turn is cancelled (the caller cancels the run).
 */
async function askEditor(
  peer: AgentContext,
  session: Session,
  calls: readonly PendingCall[],
  signal: AbortSignal,
  logger: Logger,
  run: { runId: string; traceId: string },
): Promise<Map<string, Decision>> {
  const { runId, traceId } = run;
  const decisions = new Map<string, Decision>();
  for (const call of calls) {
    if (signal.aborted) break;
    if (session.alwaysAllowed.has(call.tool)) {
      decisions.set(call.toolCallId, { approved: true });
      continue;
    }
    let decision: Decision;
    try {
      const answer = await peer.request(
        "session/request_permission",
        {
          sessionId: session.threadId,
          toolCall: {
            toolCallId: call.toolCallId,
            title: toolTitle(call.tool, call.args),
            kind: toolKind(call.tool),
            status: "pending",
            rawInput: call.args,
          },
          options: [
            { optionId: ALLOW_ONCE, name: "Allow", kind: "allow_once" },
            { optionId: ALLOW_ALWAYS, name: `Always allow ${call.tool}`, kind: "allow_always" },
            { optionId: REJECT_ONCE, name: "Reject", kind: "reject_once" },
          ],
          _meta: {
            "antler/run_id": runId,
            "antler/trace_id": traceId,
            ...(call.rule ? { "antler/rule": call.rule } : {}),
            ...(call.reason ? { "antler/reason": call.reason } : {}),
          },
        },
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      );
      const outcome = answer.outcome;
      if (outcome.outcome === "cancelled") decision = { approved: false, reason: "the editor cancelled the permission request" };
      else if (outcome.optionId === ALLOW_ONCE) decision = { approved: true };
      else if (outcome.optionId === ALLOW_ALWAYS) {
        session.alwaysAllowed.add(call.tool);
        decision = { approved: true };
      } else if (outcome.optionId === REJECT_ONCE) decision = { approved: false, reason: "rejected in the editor" };
      else decision = { approved: false, reason: `the editor answered an unknown option (${outcome.optionId})` };
    } catch (err) {
      if (signal.aborted) break;
      const message = err instanceof Error ? err.message : String(err);
      logger.warn(
        { err, thread_id: session.threadId, run_id: runId, trace_id: traceId, tool_call_id: call.toolCallId },
        "ACP permission request failed",
      );
      decision = { approved: false, reason: `the editor could not be asked: ${message}` };
    }
    logger.info(
      {
        thread_id: session.threadId,
        run_id: runId,
        trace_id: traceId,
        tool_call_id: call.toolCallId,
        tool: call.tool,
        approved: decision.approved,
      },
      "ACP permission answered",
    );
    decisions.set(call.toolCallId, decision);
  }
  return decisions;
}

/** Whether `approval:` rules are on in the config (then tool calls may pause before they run). */
function approvalOn(client: AntlerClient): boolean {
  const section = (client.kernel.config as Readonly<Record<string, unknown>>).approval as
    | { enabled?: boolean; rules?: unknown[] }
    | undefined;
  if (!section) return false;
  return section.enabled ?? (Array.isArray(section.rules) && section.rules.length > 0);
}

/** Sends updates in order; each is written before the next (and before the prompt's response). */
async function send(peer: AgentContext, sessionId: string, updates: readonly SessionUpdate[]): Promise<void> {
  for (const update of updates) await peer.notify("session/update", { sessionId, update });
}

function ignoredMcpServers(logger: Logger, count: number): void {
  logger.info({ count }, "the ACP client's MCP servers are not used: Antler runs with the MCP servers in its own config");
}

/** An Antler error as a JSON-RPC error: its first line as the message, its code and hint as data. */
export function toRequestError(err: unknown): RequestError {
  if (err instanceof RequestError) return err;
  if (isAntlerError(err)) {
    const message = err.message.split("\n")[0] ?? err.code;
    return new RequestError(-32603, message, { code: err.code, ...(err.hint ? { hint: err.hint } : {}) });
  }
  return RequestError.internalError(undefined, err instanceof Error ? err.message : String(err));
}
