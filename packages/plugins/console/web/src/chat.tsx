import { type CSSProperties, type DragEvent, type ReactNode, useCallback, useEffect, useId, useMemo, useRef, useState } from "react";
import {
  ApiError,
  type ApprovalDecision,
  api,
  apiRaw,
  attachRun,
  followRun,
  formatBytes,
  latestRun,
  type RunHandlers,
  type RunSummary,
  resumeRun,
  runAgent,
} from "./api";
import { ApprovalCard } from "./approval";
import { type ArtifactSettings, Artifacts } from "./artifacts";
import { AskCard, ToolCard } from "./cards";
import { useDrawer } from "./drawer";
import { useI18n, useT } from "./i18n";
import { tabListKeys } from "./keyboard";
import { Markdown, MarkdownPlaceContext } from "./markdown";
import {
  AgentPicker,
  CopyButton,
  HumanMessage,
  ModelPicker,
  ThinkingToggle,
  ThreadTitle,
  useAgents,
  useModels,
  useThinkingChoice,
} from "./message-actions";
import { SideResizer } from "./side-resizer";
import type { ThreadRecord } from "./thread-list";
import { Timeline } from "./timeline";
import {
  applyFrame,
  approvalItem,
  IDLE_RUN,
  type Item,
  itemsFromMessages,
  type RunStatus,
  type SavedMessage,
  type ThreadView,
} from "./transcript";
import { VirtualList } from "./virtual-list";

export interface Limits {
  max_files: number;
  max_file_bytes: number;
  /** How the artifacts panel shows files (`artifacts` of the console's config). */
  artifacts?: ArtifactSettings;
  /** The model a run takes when none is picked (`default_model`, else the first configured). */
  defaultModel?: string | null;
  /** Prompts offered on an empty thread (`suggestions` of the console's config). */
  suggestions?: Suggestion[];
}

export interface Suggestion {
  title: string;
  prompt: string;
}

/** The configured prompts as cards on an empty thread; a click sends one as the first message. */
function Suggestions({ suggestions, onPick }: { suggestions: Suggestion[]; onPick(prompt: string): void }): ReactNode {
  const t = useT();
  return (
    <section className="suggestions" aria-label={t("suggestions.label")}>
      <h2>{t("suggestions.title")}</h2>
      <ul className="suggestions-list">
        {suggestions.map((s) => (
          <li key={`${s.title}\n${s.prompt}`}>
            <button type="button" onClick={() => onPick(s.prompt)}>
              <strong>{s.title}</strong>
              {s.prompt !== s.title ? <span className="muted">{s.prompt}</span> : null}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

const EMPTY: ThreadView = { items: [], title: null, todos: [], artifacts: [] };

/** The side panel's tabs, in order. */
const PANELS = ["artifacts", "timeline"] as const;
type Panel = (typeof PANELS)[number];

/** The gateway's code for a run whose events after a point cannot be replayed (pruned, or its start rewritten). */
const EVENTS_EXPIRED = "ANTLER_ERR_GATEWAY_RUN_EVENTS_EXPIRED";

/** Messages per read of a thread: opening it reads the last page, scrolling up reads the one before. */
export const MESSAGES_PAGE = 100;

interface SavedState {
  title: string | null;
  messages: SavedMessage[];
  /** Position of `messages[0]` in the thread; 0 when the page reaches its first message. */
  messages_offset?: number;
  artifacts: string[];
  todos: unknown[] | null;
  metadata?: Record<string, unknown>;
}

/** The saved messages loaded so far, where they start in the thread, and how many items they made. */
interface Loaded {
  threadId: string;
  messages: SavedMessage[];
  offset: number;
  items: number;
}

const statePath = (threadId: string, before?: number) =>
  `/threads/${encodeURIComponent(threadId)}/state?messages_limit=${MESSAGES_PAGE}${before === undefined ? "" : `&before=${before}`}`;

const TODO_STATES = ["pending", "in_progress", "completed"] as const;

function Todos({ todos }: { todos: ThreadView["todos"] }): ReactNode {
  const t = useT();
  if (todos.length === 0) return null;
  const stateOf = (status: string | undefined) => TODO_STATES.find((s) => s === status) ?? "pending";
  return (
    <section className="todos" aria-label={t("todos.title")}>
      <h2>{t("todos.title")}</h2>
      <ul>
        {todos.map((todo, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the todo list is replaced whole; two todos may have the same text
          <li key={`${i}-${todo.content ?? ""}`} data-status={todo.status}>
            <span aria-hidden="true">{todo.status === "completed" ? "☑" : todo.status === "in_progress" ? "▶" : "☐"}</span> {todo.content}
            <span className="sr-only"> ({t(`todos.status.${stateOf(todo.status)}`)})</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function Chat({
  threadId,
  limits,
  onChanged,
  onShowThreads,
  onBranched,
  onOpenThread,
  initialMessage,
  onInitialSent,
}: {
  threadId: string;
  limits: Limits | null;
  onChanged(): void;
  /** A branch of this thread was made (edit and resend, regenerate): open it and send `text` there. */
  onBranched(threadId: string, text: string): void;
  onOpenThread(threadId: string): void;
  /** A message to send once the thread is open (the edited message of a branch just made). */
  initialMessage: string | null;
  onInitialSent(): void;
  /** Opens the thread list (a drawer on a phone; the button is hidden where the list is always shown). */
  onShowThreads(): void;
}): ReactNode {
  const { t, locale } = useI18n();
  const [view, setView] = useState<ThreadView>(EMPTY);
  const [run, setRun] = useState<RunStatus>(IDLE_RUN);
  const [draft, setDraft] = useState("");
  const [loadError, setLoadError] = useState<string | null>(null);
  const [panel, setPanel] = useState<Panel>("artifacts");
  const tabsId = useId();
  const layoutRef = useRef<HTMLDivElement>(null);
  const [sideWidth, setSideWidth] = useState<number | null>(null);
  const [uploads, setUploads] = useState<string[]>([]);
  const [uploadError, setUploadError] = useState<string | null>(null);
  const [branchOf, setBranchOf] = useState<string | null>(null);
  const models = useModels();
  const [model, setModel] = useState("");
  const agents = useAgents();
  // The custom agent the next run takes: a new thread keeps the one picked, a thread with runs its last run's.
  const [agent, setAgent] = useState("");
  // The agent the thread's newest run used (shown in its header); null: the default agent.
  const [threadAgent, setThreadAgent] = useState<string | null>(null);
  const agentInfo = agents.find((a) => a.name === agent);
  const [thinkingChoice, chooseThinking] = useThinkingChoice();
  // Thinking is offered only when the model the next run takes can think; the run is sent the choice only then.
  const runModel = models.find((m) => m.name === (model || agentInfo?.model || limits?.defaultModel));
  const canThink = runModel?.supportsThinking === true;
  const runOptions = {
    model: model || undefined,
    thinking: canThink && thinkingChoice !== null ? thinkingChoice : undefined,
    agent: agent || undefined,
  };
  const runOptionsRef = useRef(runOptions);
  runOptionsRef.current = runOptions;
  const sendRef = useRef<(text: string) => Promise<void>>(async () => undefined);
  const initialRef = useRef(initialMessage);
  initialRef.current = initialMessage;
  const [dragging, setDragging] = useState(false);
  // On a phone the side panel is a drawer over the chat; on wider screens it is always shown and this is unused.
  const [detailsOpen, setDetailsOpen] = useDrawer(".details-open > .side .close-drawer");
  // Images in answers and Markdown artifacts may come from this thread's artifacts, and from nowhere else.
  const place = useMemo(() => ({ threadId, artifacts: view.artifacts }), [threadId, view.artifacts]);
  // Bumped on each send, so the message list takes the reader to the end where the answer will appear.
  const [followToken, setFollowToken] = useState(0);
  const abortRef = useRef<AbortController | null>(null);
  const state = useRef({ view, run });
  state.current = { view, run };

  const loaded = useRef<Loaded>({ threadId, messages: [], offset: 0, items: 0 });
  const loadingOlder = useRef(false);
  const [hasOlder, setHasOlder] = useState(false);
  // The thread's saved state has been read: before that an empty view is not an empty thread.
  const [opened, setOpened] = useState(false);

  /**
   * Draws a run's frames as they come, starting from the view as it is now, and says when it is over. The one
   * path for a run this page started and a run it joined (after a reload, or one another tab or device started).
   */
  const track = useCallback(
    async (follow: (handlers: RunHandlers, signal: AbortSignal) => Promise<void>, abort: AbortController, rethrowRefusal = false) => {
      let current = { view: state.current.view, run: state.current.run };
      let started = false;
      try {
        await follow(
          {
            onFrame(frame) {
              if (!started) {
                started = true;
                current = { view: state.current.view, run: state.current.run };
              }
              current = applyFrame(current.view, current.run, frame.event, frame.data);
              setView(current.view);
              setRun(current.run);
            },
          },
          abort.signal,
        );
      } catch (e) {
        // A decision the server refused before the run resumed (the run is still paused): the card shows why.
        if (rethrowRefusal && !started && e instanceof ApiError && e.status < 500) throw e;
        if (!abort.signal.aborted) {
          current = applyFrame(current.view, current.run, "error", {
            code: (e as { code?: string }).code ?? "ANTLER_ERR_INTERNAL",
            message: (e as Error).message,
          });
          setView(current.view);
          setRun(current.run);
        }
      } finally {
        if (!abort.signal.aborted) {
          setRun((r) => ({ ...r, running: false }));
          onChanged();
        }
      }
    },
    [onChanged],
  );

  /**
   * Reads the thread's last page of messages and its newest run; joins that run when it is live, and replays it
   * when it was cut short (cancelled or failed), because its partial answer never reached the saved messages.
   */
  const openThread = useCallback(
    async (abort: AbortController) => {
      const [s, latest] = await Promise.all([
        api<SavedState>(statePath(threadId), { signal: abort.signal }),
        latestRun(threadId, abort.signal),
      ]);
      if (abort.signal.aborted) return;
      setBranchOf(typeof s.metadata?.branch_of === "string" ? s.metadata.branch_of : null);
      setThreadAgent(runAgent(latest));
      if (latest) setAgent(runAgent(latest) ?? "");
      const items = itemsFromMessages(s.messages);
      loaded.current = { threadId, messages: s.messages, offset: s.messages_offset ?? 0, items: items.length };
      // A run paused for approval waits on its card, after the saved messages (its record keeps the interrupt).
      const pause = latest?.status === "paused" ? approvalItem(latest.run_id, latest.interrupt?.value) : undefined;
      if (pause) items.push(pause);
      setHasOlder((s.messages_offset ?? 0) > 0);
      const view: ThreadView = { items, title: s.title, artifacts: s.artifacts, todos: (s.todos ?? []) as ThreadView["todos"] };
      const live = latest?.status === "running" || latest?.status === "pending";
      state.current = { view, run: { ...IDLE_RUN, running: live, runId: latest?.run_id ?? null } };
      setView(view);
      setRun(state.current.run);
      if (!latest || !(live || latest.status === "cancelled" || latest.status === "error")) return;
      await track(
        (handlers, signal) =>
          attachRun(threadId, latest.run_id, handlers, signal).catch((e: unknown) => {
            // A finished run whose events were pruned or never kept: the saved messages are all there is.
            if (!live && e instanceof ApiError && e.status < 500) return;
            throw e;
          }),
        abort,
      );
    },
    [threadId, track],
  );

  useEffect(() => {
    abortRef.current?.abort();
    const abort = new AbortController();
    abortRef.current = abort;
    setView(EMPTY);
    setRun(IDLE_RUN);
    setUploads([]);
    setLoadError(null);
    setHasOlder(false);
    setOpened(false);
    loaded.current = { threadId, messages: [], offset: 0, items: 0 };
    openThread(abort)
      .then(() => {
        if (!abort.signal.aborted) setOpened(true);
        const first = initialRef.current;
        if (first === null || abort.signal.aborted) return;
        onInitialSent();
        void sendRef.current(first);
      })
      .catch((e: Error) => {
        if (!abort.signal.aborted) setLoadError(e.message);
      });
    return () => abort.abort();
  }, [threadId, openThread, onInitialSent]);

  // The page never stays on a run the server says is over. Should the stream that brings its end get stuck (a join
  // racing the run's end), two reads of the record 2 s apart that both say it ended read the thread as saved.
  useEffect(() => {
    if (!run.running || !run.runId) return;
    const runId = run.runId;
    let endedReads = 0;
    const timer = setInterval(() => {
      void api<RunSummary>(`/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}`)
        .then((record) => {
          endedReads = ["success", "error", "cancelled"].includes(record.status) ? endedReads + 1 : 0;
          if (endedReads < 2 || !state.current.run.running || state.current.run.runId !== runId) return;
          clearInterval(timer);
          abortRef.current?.abort();
          const abort = new AbortController();
          abortRef.current = abort;
          openThread(abort).catch((e: Error) => {
            if (!abort.signal.aborted) setLoadError(e.message);
          });
        })
        .catch(() => undefined);
    }, 2000);
    return () => clearInterval(timer);
  }, [run.running, run.runId, threadId, openThread]);

  // The page before the loaded messages, put in front of them. Items are rebuilt from all loaded messages, so a
  // tool call and its result that fell on two pages join one card; what runs added since stays after them. Not
  // while a run streams: its frames build on the items as they were.
  const loadOlder = useCallback(async () => {
    const current = loaded.current;
    if (loadingOlder.current || current.offset === 0 || state.current.run.running) return;
    loadingOlder.current = true;
    try {
      const page = await api<SavedState>(statePath(current.threadId, current.offset));
      if (loaded.current !== current) return; // another thread opened, or another page came in meanwhile
      const messages = [...page.messages, ...current.messages];
      const items = itemsFromMessages(messages);
      const offset = page.messages_offset ?? 0;
      loaded.current = { threadId: current.threadId, messages, offset, items: items.length };
      setHasOlder(offset > 0);
      setView((v) => ({ ...v, items: [...items, ...v.items.slice(current.items)] }));
    } catch (e) {
      setLoadError((e as Error).message);
    } finally {
      loadingOlder.current = false;
    }
  }, []);

  const send = useCallback(
    async (text: string) => {
      if (!text.trim() || state.current.run.running) return;
      const tail = state.current.view.items.at(-1);
      if (tail?.kind === "approval" && !tail.decided) return;
      const abort = new AbortController();
      abortRef.current = abort;
      const before = state.current.view;
      state.current = {
        view: { ...before, items: [...before.items, { kind: "human", key: `h${Date.now()}`, text, local: true } as Item] },
        run: { ...IDLE_RUN, running: true },
      };
      setView(state.current.view);
      setRun(state.current.run);
      setDraft("");
      setFollowToken((t) => t + 1);
      setThreadAgent(runOptionsRef.current.agent ?? null);
      let busy = false;
      await track(
        (handlers, signal) =>
          followRun(threadId, text, handlers, signal, runOptionsRef.current).catch((e: unknown) => {
            if (!(e instanceof ApiError && e.code === "ANTLER_ERR_THREAD_BUSY")) throw e;
            busy = true;
          }),
        abort,
      );
      if (!busy || abort.signal.aborted) return;
      // Another tab or device started a run meanwhile: the message was not sent. It goes back into the box, and
      // the page reads the thread again and joins the run that holds it, so Send comes back when that run ends.
      setDraft(text);
      state.current = { view: before, run: IDLE_RUN };
      setView(before);
      setRun(IDLE_RUN);
      await openThread(abort).catch((e: Error) => {
        if (!abort.signal.aborted) setLoadError(e.message);
      });
    },
    [track, threadId, openThread],
  );
  sendRef.current = send;

  /** Edit and resend, or regenerate: a new thread from just before `messageId`, where `text` is then sent. */
  const branchAndSend = useCallback(
    async (messageId: string, text: string) => {
      const record = await api<ThreadRecord>(`/threads/${encodeURIComponent(threadId)}/branch`, {
        method: "POST",
        json: { message_id: messageId },
      });
      onBranched(record.thread_id, text);
    },
    [threadId, onBranched],
  );

  /** Sends a decision on a paused run and follows the run it resumes; a refused decision is thrown to the card. */
  const decide = useCallback(
    async (runId: string, decision: ApprovalDecision) => {
      if (state.current.run.running) return;
      const abort = new AbortController();
      abortRef.current?.abort();
      abortRef.current = abort;
      let resumed = false;
      let frames = 0;
      let unreplayable = false;
      await track(
        (handlers, signal) =>
          resumeRun(
            threadId,
            runId,
            decision,
            () => {
              // The resumed part: new answers stream in after the card; what was saved before stays as drawn.
              resumed = true;
              state.current = { view: state.current.view, run: { ...IDLE_RUN, running: true, runId } };
              setRun(state.current.run);
              setFollowToken((t) => t + 1);
            },
            {
              onFrame(frame) {
                // The log cannot rebuild the resumed part's state (an edited call rewrote a message the run began
                // with): the saved thread is the truth, so read it instead of showing an error.
                if (frame.event === "error" && (frame.data as { code?: string })?.code === EVENTS_EXPIRED) {
                  unreplayable = true;
                  return;
                }
                frames += 1;
                handlers.onFrame(frame);
              },
            },
            signal,
          ),
        abort,
        true,
      );
      // The run went on but its stream brought nothing here: show the thread as saved (the answer, the card
      // answered) rather than a card that still looks pending.
      if (resumed && (frames === 0 || unreplayable) && !abort.signal.aborted) {
        const card = state.current.view.items.find((i) => i.kind === "approval" && i.runId === runId);
        await openThread(abort).catch((e: Error) => {
          if (!abort.signal.aborted) setLoadError(e.message);
        });
        // Saved messages hold no cards: the decided one goes back after the calls it held.
        if (card?.kind === "approval" && !abort.signal.aborted) {
          const items = state.current.view.items.filter((i) => i.key !== card.key);
          const callKeys = new Set(card.calls.map((c) => c.tool_call_id));
          const after = items.findLastIndex((i) => i.kind === "tool" && callKeys.has(i.key));
          items.splice(after === -1 ? items.length : after + 1, 0, { ...card, decided: true });
          const view = { ...state.current.view, items };
          state.current = { view, run: state.current.run };
          setView(view);
        }
      }
    },
    [track, threadId, openThread],
  );

  const cancel = async () => {
    const runId = state.current.run.runId;
    if (!runId) return;
    await api(`/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/cancel`, { method: "POST" }).catch(
      () => undefined,
    );
  };

  // While a run holds the thread, a message can wait for it to end ("Send when done") or end it first
  // ("Interrupt and send": the run is cancelled, its partial answer kept, then the message goes).
  const [queued, setQueued] = useState<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new thread drops what was queued for the old one.
  useEffect(() => setQueued(null), [threadId]);
  useEffect(() => {
    if (run.running || queued === null) return;
    setQueued(null);
    void send(queued);
  }, [run.running, queued, send]);
  const queue = () => {
    if (!draft.trim()) return;
    setQueued(draft);
    setDraft("");
  };
  const interrupt = () => {
    if (!draft.trim()) return;
    queue();
    void cancel();
  };

  const upload = async (files: FileList | File[]) => {
    const list = [...files];
    if (list.length === 0) return;
    setUploadError(null);
    if (limits) {
      const big = list.find((f) => f.size > limits.max_file_bytes);
      if (big)
        return setUploadError(
          t("upload.tooBig", {
            name: big.name,
            size: big.size.toLocaleString(locale),
            limit: formatBytes(limits.max_file_bytes),
            limitBytes: limits.max_file_bytes.toLocaleString(locale),
          }),
        );
      if (list.length > limits.max_files) return setUploadError(t("upload.tooMany", { count: limits.max_files }));
    }
    const form = new FormData();
    for (const f of list) form.append("files", f, f.name);
    try {
      const response = await apiRaw(`/threads/${encodeURIComponent(threadId)}/uploads`, { method: "POST", body: form });
      const { files: saved } = (await response.json()) as { files: Array<{ virtual_path: string; size: number }> };
      setUploads((u) => [...u, ...saved.map((f) => `${f.virtual_path} (${formatBytes(f.size)})`)]);
    } catch (e) {
      setUploadError((e as Error).message);
    }
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    void upload(e.dataTransfer.files);
  };

  const last = view.items[view.items.length - 1];
  // A paused run holds the thread until someone decides: Send waits for the card (or Cancel run).
  const awaitingApproval = last?.kind === "approval" && !last.decided && !run.running ? last : null;
  const awaitingCalls = useMemo(() => new Set(awaitingApproval?.calls.map((c) => c.tool_call_id) ?? []), [awaitingApproval]);
  // What Retry on an error card sends again: the user's last message.
  const lastAsked = view.items.findLast((i) => i.kind === "human")?.text;
  // Regenerate: the newest answer, asked again from just before the question it answers (a new branch).
  const regenerate = useMemo(() => {
    if (run.running) return null;
    const answerAt = view.items.findLastIndex((i) => i.kind === "ai");
    const question = view.items.slice(0, answerAt).findLast((i) => i.kind === "human");
    if (answerAt === -1 || question?.kind !== "human" || question.local) return null;
    return { answerKey: view.items[answerAt]?.key ?? "", questionKey: question.key, question: question.text };
  }, [view.items, run.running]);
  const render = useCallback(
    (item: Item): ReactNode => {
      switch (item.kind) {
        case "human":
          return (
            <HumanMessage text={item.text} canBranch={!item.local && !run.running} onResend={(text) => branchAndSend(item.key, text)} />
          );
        case "ai":
          return (
            <div className={`msg msg-ai${item.partial ? " msg-partial" : ""}`} data-message={item.key}>
              <span className="who">{t("msg.agent")}</span>
              <Markdown text={item.text} />
              <div className="msg-actions">
                <CopyButton text={item.text} label={t("msg.copyAnswer")} />
                {regenerate && item.key === regenerate.answerKey ? (
                  <button
                    type="button"
                    className="link"
                    aria-label={t("msg.regenerateLabel")}
                    onClick={() =>
                      void branchAndSend(regenerate.questionKey, regenerate.question).catch((e: Error) => setLoadError(e.message))
                    }
                  >
                    {t("msg.regenerate")}
                  </button>
                ) : null}
              </div>
              {item.partial ? (
                <p className="partial-note" data-testid="partial-note">
                  {t(item.partial === "cancelled" ? "msg.partialCancelled" : "msg.partialFailed")}
                </p>
              ) : null}
            </div>
          );
        case "tool":
          return <ToolCard item={item} awaiting={awaitingCalls.has(item.key)} />;
        case "ask":
          return <AskCard request={item.request} pending={!run.running && last?.key === item.key} onReply={(t) => void send(t)} />;
        case "notice":
          return <p className={`notice notice-${item.tone}`}>{t(item.message)}</p>;
        case "approval":
          return (
            <ApprovalCard
              item={item}
              pending={!run.running && last?.key === item.key}
              onDecide={(decision) => decide(item.runId, decision)}
            />
          );
        case "error":
          return (
            <ErrorCard
              item={item}
              onRetry={lastAsked !== undefined && last?.key === item.key && !run.running ? () => void send(lastAsked) : undefined}
            />
          );
      }
    },
    [run.running, last?.key, send, lastAsked, decide, awaitingCalls, branchAndSend, regenerate, t],
  );

  return (
    <MarkdownPlaceContext.Provider value={place}>
      <div
        ref={layoutRef}
        className={`chat-layout${detailsOpen ? " details-open" : ""}`}
        style={sideWidth ? ({ "--side-width": `${sideWidth}px` } as CSSProperties) : undefined}
      >
        <section
          className={`chat${dragging ? " dragging" : ""}`}
          aria-label={t("chat.label")}
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={onDrop}
        >
          <header className="chat-head">
            <button type="button" className="narrow-only" aria-label={t("chat.showThreads")} onClick={onShowThreads}>
              ☰
            </button>
            <ThreadTitle
              threadId={threadId}
              title={view.title}
              onRenamed={(title) => {
                setView((v) => ({ ...v, title }));
                onChanged();
              }}
            />
            <button type="button" className="narrow-only" aria-expanded={detailsOpen} onClick={() => setDetailsOpen(true)}>
              {t("chat.details")}
            </button>
            {threadAgent ? (
              <span className="badge thread-agent" data-testid="thread-agent">
                {t("agent.uses", { name: threadAgent })}
              </span>
            ) : null}
            <div className="run-status" aria-live="polite">
              {run.running ? <span className="badge badge-running">{t("run.running")}</span> : null}
              {!run.running && run.stopReason ? <span data-testid="stop-reason">{t("run.stop", { reason: run.stopReason })}</span> : null}
              {run.usage ? (
                <span data-testid="usage">{t("run.tokens", { input: run.usage.input_tokens, output: run.usage.output_tokens })}</span>
              ) : null}
            </div>
          </header>
          {loadError ? <p role="alert">{loadError}</p> : null}
          {branchOf ? (
            <p className="muted branch-note" data-testid="branch-note">
              {t("branch.before")}
              <a
                href={`/threads/${encodeURIComponent(branchOf)}`}
                onClick={(e) => {
                  e.preventDefault();
                  onOpenThread(branchOf);
                }}
              >
                {t("branch.link")}
              </a>
              {t("branch.after")}
            </p>
          ) : null}
          {hasOlder ? (
            <p className="muted older-note" aria-live="polite">
              {t("chat.olderNote")}
            </p>
          ) : null}
          <VirtualList
            items={view.items}
            itemKey={itemKey}
            render={render}
            label={t("chat.messages")}
            onReachTop={hasOlder ? loadOlder : undefined}
            followToken={followToken}
          />
          {opened && view.items.length === 0 && !run.running && limits?.suggestions?.length ? (
            <Suggestions suggestions={limits.suggestions} onPick={(prompt) => void send(prompt)} />
          ) : null}
          <form
            className="composer"
            onSubmit={(e) => {
              e.preventDefault();
              void send(draft);
            }}
          >
            <label htmlFor="composer-input" className="sr-only">
              {t("composer.label")}
            </label>
            <textarea
              id="composer-input"
              rows={2}
              placeholder={t("composer.placeholder")}
              value={draft}
              onChange={(e) => setDraft(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && !e.shiftKey) {
                  e.preventDefault();
                  void send(draft);
                }
              }}
            />
            <div className="composer-actions">
              {run.running ? (
                <>
                  <button type="button" className="danger" onClick={() => void cancel()} disabled={!run.runId}>
                    {t("run.cancel")}
                  </button>
                  <button type="button" onClick={queue} disabled={!draft.trim() || queued !== null}>
                    {t("composer.sendWhenDone")}
                  </button>
                  <button type="button" onClick={interrupt} disabled={!draft.trim() || queued !== null || !run.runId}>
                    {t("composer.interrupt")}
                  </button>
                </>
              ) : awaitingApproval ? (
                <>
                  <button type="submit" className="primary" disabled aria-describedby="awaiting-approval">
                    {t("composer.send")}
                  </button>
                  <button
                    type="button"
                    className="danger"
                    onClick={() =>
                      void api(`/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(awaitingApproval.runId)}/cancel`, {
                        method: "POST",
                      })
                        .then(() =>
                          setView((v) => ({
                            ...v,
                            items: [
                              ...v.items,
                              { kind: "notice", key: `cancel-${awaitingApproval.runId}`, message: "run.cancelled", tone: "info" },
                            ],
                          })),
                        )
                        .catch((e: Error) => setLoadError(e.message))
                    }
                  >
                    {t("run.cancel")}
                  </button>
                  <span id="awaiting-approval" className="muted">
                    {t("composer.awaitingApproval")}
                  </span>
                </>
              ) : (
                <button type="submit" className="primary" disabled={!draft.trim()}>
                  {t("composer.send")}
                </button>
              )}
              <ModelPicker models={models} value={model} onChange={setModel} />
              <AgentPicker agents={agents} value={agent} onChange={setAgent} />
              {canThink ? <ThinkingToggle checked={thinkingChoice ?? agentInfo?.thinking ?? true} onChange={chooseThinking} /> : null}
              <label className="upload-button">
                {t("upload.button")}
                <input type="file" multiple className="sr-only" onChange={(e) => e.target.files && void upload(e.target.files)} />
              </label>
              <span className="muted limits">
                {limits ? t("upload.limits", { count: limits.max_files, size: formatBytes(limits.max_file_bytes) }) : t("upload.drop")}
              </span>
            </div>
            {queued !== null ? (
              <p className="queued" data-testid="queued">
                <span>
                  {t("composer.waiting")}
                  <q>{queued}</q>
                </span>{" "}
                <button
                  type="button"
                  className="link"
                  onClick={() => {
                    setDraft(queued);
                    setQueued(null);
                  }}
                >
                  {t("composer.edit")}
                </button>
              </p>
            ) : null}
            {uploadError ? <p role="alert">{uploadError}</p> : null}
            {uploads.length > 0 ? (
              <ul className="uploads" aria-label={t("upload.list")}>
                {uploads.map((u) => (
                  <li key={u}>{u}</li>
                ))}
              </ul>
            ) : null}
          </form>
        </section>
        {detailsOpen ? (
          <button type="button" className="scrim" aria-label={t("drawer.closeDetails")} onClick={() => setDetailsOpen(false)} />
        ) : null}
        <aside className="side" aria-label={t("side.label")}>
          <SideResizer layout={layoutRef} width={sideWidth} onWidth={setSideWidth} />
          <button type="button" className="narrow-only close-drawer" onClick={() => setDetailsOpen(false)}>
            {t("drawer.close")}
          </button>
          <div className="tabs" role="tablist" aria-label={t("tabs.label")} onKeyDown={tabListKeys(PANELS, panel, setPanel)}>
            {PANELS.map((tab) => (
              <button
                key={tab}
                type="button"
                role="tab"
                id={`${tabsId}-${tab}`}
                data-tab={tab}
                aria-selected={panel === tab}
                aria-controls={`${tabsId}-panel`}
                tabIndex={panel === tab ? 0 : -1}
                onClick={() => setPanel(tab)}
              >
                {tab === "artifacts" ? t("tabs.artifacts", { count: view.artifacts.length }) : t("tabs.timeline")}
              </button>
            ))}
          </div>
          <Todos todos={view.todos} />
          <div className="tab-panel" role="tabpanel" id={`${tabsId}-panel`} aria-labelledby={`${tabsId}-${panel}`}>
            {panel === "artifacts" ? (
              <Artifacts threadId={threadId} paths={view.artifacts} settings={limits?.artifacts} />
            ) : (
              <Timeline
                key={`${threadId}-${run.running ? "live" : (run.runId ?? "")}`}
                threadId={threadId}
                runId={run.running ? null : run.runId}
              />
            )}
          </div>
        </aside>
      </div>
    </MarkdownPlaceContext.Provider>
  );
}

/** A failure as one card: what failed, why, the trace id once (with a copy button), and Retry on the newest one. */
function ErrorCard({ item, onRetry }: { item: Extract<Item, { kind: "error" }>; onRetry: (() => void) | undefined }): ReactNode {
  const t = useT();
  const [copied, setCopied] = useState(false);
  return (
    <div className="error-card" data-testid="error-card">
      <p className="error-title">
        <strong>{t(item.title)}</strong>
        {item.code ? <code className="error-code">{item.code}</code> : null}
      </p>
      <p className="error-message">{item.message}</p>
      <div className="error-actions">
        {item.traceId ? (
          <span className="muted">
            {t("error.traceId")} <code data-testid="error-trace-id">{item.traceId}</code>{" "}
            <button
              type="button"
              className="link"
              onClick={() =>
                void navigator.clipboard
                  ?.writeText(item.traceId ?? "")
                  .then(() => setCopied(true))
                  .catch(() => undefined)
              }
            >
              {copied ? t("copy.done") : t("copy.action")}
            </button>
          </span>
        ) : null}
        {onRetry ? (
          <button type="button" className="primary" onClick={onRetry}>
            {t("error.retry")}
          </button>
        ) : null}
      </div>
    </div>
  );
}

const itemKey = (item: Item) => `${item.kind}:${item.key}`;
