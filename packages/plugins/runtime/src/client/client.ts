import { randomUUID } from "node:crypto";
import { channel } from "node:diagnostics_channel";
import { cp, rm } from "node:fs/promises";
import {
  type AntlerDatabase,
  AntlerError,
  assertSafeId,
  type Checkpointer,
  type CreateKernelOptions,
  createKernel,
  DEFAULT_USER_ID,
  ErrorCodes,
  ensureTraceContext,
  getCurrentTraceId,
  isAntlerError,
  type Kernel,
  type ModelInfo,
  requestTraceContext,
  TRACE_METADATA_KEY,
  threadPaths,
} from "@antler/kernel";
import { withRunContext } from "@antler/kernel/authoring";
import { HumanMessage, RemoveMessage } from "@langchain/core/messages";
import { type BaseCheckpointSaver, Command, REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { sql } from "kysely";
import type { ReactAgent } from "langchain";
import { admitRun, admittedModels } from "../admission.js";
import {
  type AgentDetails,
  type AgentSaveRequest,
  type AgentSummary,
  type CustomAgent,
  deleteCustomAgent,
  describeCustomAgent,
  listCustomAgents,
  requireCustomAgent,
  saveCustomAgent,
  soulSection,
} from "../agents.js";
import { runtimeConfig, subagentsEnabled } from "../config.js";
import { RuntimeErrorCodes } from "../errors.js";
import { QUEUE_NOTIFICATIONS_TOKEN, queueChannel } from "../queue-notifications.js";
import { vetResume } from "../resume-checks.js";
import { type Principal, sanitizeRunContext } from "../run-context.js";
import { type Artifact, readArtifact } from "../stores/artifacts.js";
import { BackgroundPruner } from "../stores/retention.js";
import { fenceHolds, forgetToolCall, type RunFence, startToolCall } from "../stores/run-takeover.js";
import {
  createRunStore,
  type MultitaskStrategy,
  type PausedInterrupt,
  type RunEndFacts,
  type RunRecord,
  type RunStatus,
  type RunStore,
  runRecordMigrations,
  threadBusyError,
} from "../stores/runs.js";
import { createThreadStore, type ThreadRecord, type ThreadStore, threadMigrations } from "../stores/threads.js";
import { saveUpload, type UploadRecord } from "../stores/uploads.js";
import {
  fencedSaver,
  type TakeoverState,
  type ToolCallStart,
  takenOverError,
  takeoverInput,
  toolJournalMiddleware,
} from "./durable-runs.js";
import {
  type SerializedMessage,
  type SerializedMessages,
  type StreamEvent,
  StreamTranslator,
  serializeMessage,
  type Usage,
  type ValuesEvent,
} from "./events.js";
import { buildLeadAgent } from "./lead-agent.js";
import { type MessagePageRequest, readMessagePage } from "./message-page.js";
import { QueueExecutor } from "./queue.js";
import { contextEffort, type ReasoningEffort, runReasoningEffort, runThinking } from "./run-options.js";
import { type ThreadCheckpoint, type ThreadHistoryOptions, toThreadCheckpoint, type UpdateThreadStateOptions } from "./thread-state.js";
import { toolFingerprint } from "./tool-fingerprint.js";

export type { ReasoningEffort } from "./run-options.js";

export interface AntlerClientOptions {
  /** A booted kernel. The client starts it if it is not started yet. */
  kernel: Kernel;
  /** Use this checkpointer instead of the one `storage:` in config describes. */
  checkpointer?: BaseCheckpointSaver;
  /** The effective user when a call names none. Default "default". */
  userId?: string;
  /** Close the kernel when the client closes. */
  ownsKernel?: boolean;
  /** How this client vouches for its runs to other instances on the same database. */
  runLeases?: {
    /** How often live runs' leases are renewed and cancel requests from other instances are read. Default 5000. */
    heartbeatMs?: number;
    /** How long a lease lasts; a running run past it counts as orphaned. Default 3 × heartbeatMs. */
    leaseMs?: number;
    /** How long `cancelRun` waits for another instance to stop a run it holds. Default heartbeatMs + 2000. */
    cancelWaitMs?: number;
  };
  /**
   * Most runs (running or queued) this client holds at once. A run past it is refused with RUNS_AT_CAPACITY
   * before anything of it is recorded, rather than starving the database pool and failing midway. Default:
   * `RUNS_PER_CONNECTION` × the database pool's size where the backend has one (PostgreSQL), else no limit.
   */
  maxActiveRuns?: number;
  /**
   * How many times a run may be started before it is given up (the gateway's `runs.max_attempts`): when its
   * process stops, another instance takes it over and continues it from its last checkpoint, up to this many
   * attempts in all; then it ends as an error (RUN_ATTEMPTS_EXHAUSTED). 1: never taken over. Default 3.
   */
  maxAttempts?: number;
}

export interface RunCallOptions {
  /** Omitted: a new thread. */
  threadId?: string;
  userId?: string;
  /** A `models:` name; default the custom agent's model, then `default_model` or the first model. */
  model?: string;
  /**
   * A custom agent (`antler agents list`): its SOUL.md joins the system prompt, its model is used unless `model`
   * names one, and its `tool_groups` restrict the tools. With `bootstrap`, the name for the agent being created.
   */
  agent?: string;
  /** A bootstrap run designs a new custom agent with the user and saves it with `setup_agent`. */
  bootstrap?: boolean;
  /**
   * Extended thinking for this run (DeerFlow's `thinking_enabled`; also read from `context.thinking_enabled`).
   * Default: the custom agent's `thinking`, else on. Always off on a model without `supports_thinking`. The run's
   * model is built with the entry's `when_thinking_enabled` or `when_thinking_disabled` block applied.
   */
  thinking?: boolean;
  /**
   * How hard the run's model thinks (`minimal|low|medium|high`; also read from `context.reasoning_effort`), in place
   * of its entry's `reasoning_effort`; each provider maps it to its own knob. Applies only when the run has thinking
   * on; on a model without `supports_thinking` it is ignored with a warning.
   */
  reasoningEffort?: ReasoningEffort;
  /** Caller context. Server-owned keys (trace id, non_interactive, sandbox ids) are dropped unless the principal is internal. */
  context?: Record<string, unknown>;
  /** Who is calling. Default: the user; only in-process callers such as the scheduler may be `INTERNAL_PRINCIPAL`. */
  principal?: Principal;
  /**
   * The caller's role for authorization (`authorization.roles`, with `@antler/plugin-guardrails`), stamped on the
   * run's context as `user_role`. Default: the principal's `role`; a `user_role` sent in `context` is dropped
   * unless the principal is internal. The gateway sets it from the API key's `role`.
   */
  userRole?: string;
  /** A trace id carried in from outside (a header); unusable ids are replaced. */
  traceId?: string;
  signal?: AbortSignal;
  /** The run's id; default a fresh UUID. The gateway picks it so the first SSE frame can name it. */
  runId?: string;
  /** Caller metadata stored on the run record and passed to LangGraph; a trace id in it is replaced. */
  metadata?: Record<string, unknown>;
  /**
   * What to do when another run (in this client or another instance on the database) holds the thread:
   * `reject` (default) fails at once with THREAD_BUSY; `enqueue` waits its turn, first come first served, and
   * runs on the updated thread; `interrupt` cancels the runs ahead of it (they end `cancelled`) and then runs.
   */
  multitaskStrategy?: MultitaskStrategy;
  /**
   * Called once, when the run's record is written and before any event: `running` (it started) or `pending`
   * (queued behind other runs). A refusal throws from the stream instead. The gateway answers HTTP on it.
   */
  onAdmitted?: (status: "running" | "pending") => void;
}

/** Who a run is, as a `RunObserver` first hears of it. */
export interface ObservedRun {
  runId: string;
  threadId: string;
  userId: string;
  traceId: string;
}

/**
 * Sees every run of a client as it happens, whoever consumes it (an HTTP stream, `runs/wait`, an in-process
 * caller, the scheduler). The gateway's run event log is one. Calls come in run order: `runStarted` once the
 * run's record is written (running or queued), `runEvent` for each event just before its consumer gets it,
 * `runEnded` once. An observer's failure is logged and never reaches the run.
 */
export interface RunObserver {
  runStarted(run: ObservedRun): void;
  /**
   * Awaited (at most 5 s) before `runStarted` of a paused run that continues under its run id (`resume`, a timeout),
   * so an event log numbers its events on from the earlier part's. Optional.
   */
  runResuming?(run: ObservedRun): Promise<void>;
  /**
   * This client took over a run whose instance stopped (its lease expired at `leaseExpiredAt`); `runResuming` and
   * `runStarted` follow when it continues. For operators' counters. Optional.
   */
  runTakenOver?(run: { runId: string; attempt: number; leaseExpiredAt: string }): void;
  /** Synchronous and on the run's path: keep it cheap (queue the work, do it later). */
  runEvent(runId: string, event: StreamEvent): void;
  /**
   * Awaited (at most 5 s) before the run's record is finished, so what the observer writes is complete by the
   * time the record says the run ended. `error` is what the stream throws (undefined when its consumer stopped).
   */
  runEnded(runId: string, outcome: "success" | "error" | "cancelled", error: unknown): void | Promise<void>;
  /**
   * Instead of `runEnded`: this instance stopped running the run without ending it (it is shutting down, see
   * `handOverAll`), and another instance continues it from its last checkpoint, under the same run id. An event log
   * keeps what it has without a closing event. Awaited like `runEnded`. Optional: an observer without it hears
   * `runEnded(runId, "cancelled", error)` (`error` coded RUN_HANDED_OVER).
   */
  runHandedOver?(runId: string, error: unknown): void | Promise<void>;
}

/** The custom event a run's stream shows when it pauses: `{ type, run_id, thread_id, trace_id, interrupt, interrupt_id }`. */
export const RUN_PAUSED_EVENT = "run_paused";
/**
 * The custom event that opens a resumed run's stream: `{ type, run_id, thread_id, trace_id, cause, interrupt_id?,
 * attempt }`; `cause` is `resume` or `timeout` (a paused run) or `takeover` (its process stopped; `attempt` counts).
 */
export const RUN_RESUMED_EVENT = "run_resumed";

/** What `invoke` (and `POST /runs/wait`) returns when a run ends, or pauses. */
export interface RunResult {
  run_id: string;
  thread_id: string;
  trace_id: string;
  /** `paused`: the run waits for a decision (`interrupt` says on what); resume it with `resume()`. */
  status: "success" | "paused";
  /** A paused run's interrupt value (an approval: `{ kind: "approval", calls, expires_at }`). */
  interrupt?: Record<string, unknown>;
  /** The last AI message's text. */
  output: string;
  values: ValuesEvent["data"];
  usage: Usage;
}

export interface CreateThreadOptions {
  threadId?: string;
  metadata?: Record<string, unknown>;
  /** `do_nothing` (default) returns an existing thread; `raise` makes it a STATE_CONFLICT error. */
  ifExists?: "do_nothing" | "raise";
  userId?: string;
}

/** How `execute` starts a run: what differs between a new run and a resumed one. */
interface RunStart {
  userId: string;
  threadId: string;
  modelName: string;
  thinking: boolean;
  traceId: string | undefined;
  runId: string | undefined;
  signal: AbortSignal | undefined;
  /** The graph's input: the new message, or a `Command({ resume })`. */
  input: unknown;
  inputMessageId: string | undefined;
  onAdmitted: RunCallOptions["onAdmitted"];
  /**
   * A resumed run: why (a decision, a pause's timeout, or a takeover after its process stopped), on which interrupt,
   * and the trace id of the request that resumed it (logged as the link).
   */
  resumed?: { cause: "resume" | "timeout" | "takeover"; interruptId?: string; by: string | null };
  /** A queued run claimed from the run store (`enqueue`): its first start, under its recorded trace id. */
  queued?: boolean;
  /** Which attempt of the run this process holds (its record's `attempt`); default 1. */
  attempt?: number;
  /** Since when (epoch ms) the run has waited to execute, when not since this call (a takeover: its lease's expiry). */
  waitingSince?: number;
  /** Writes (or claims) the run's record, calling `admitted` once it exists; answers the context to run with. */
  record(scope: {
    traceId: string;
    runId: string;
    run: { cancelled: Promise<never> };
    admitted: (status: "running" | "pending") => void;
  }): Promise<{ context: Record<string, unknown>; callerMetadata: Record<string, unknown>; custom: CustomAgent | undefined }>;
}

interface LiveRun {
  readonly userId: string;
  readonly threadId: string;
  abort(reason: unknown): void;
  /** Stops the run here without ending it: its record stays running with an expired lease, for another instance. */
  handOver(): void;
  readonly done: Promise<void>;
  /** Its record exists, so the heartbeat renews its lease. */
  recorded: boolean;
  /** The owner and attempt its writes are conditional on (set once its record exists). */
  fence?: RunFence;
}

const DEFAULT_HEARTBEAT_MS = 5000;
/**
 * diagnostics_channel that receives a `RunQueueEvent` when a run starts executing (how long it waited since it was
 * accepted, or since its stopped instance's lease expired) and when this instance takes a run over.
 */
export const RUN_QUEUE_CHANNEL = "antler:runs:queue";
export type RunQueueEvent =
  | { type: "started"; via: "new" | "queue" | "takeover"; wait_ms: number }
  | { type: "taken_over"; run_id: string; attempt: number };
const runQueueChannel = channel(RUN_QUEUE_CHANNEL);
/** `runs.max_attempts` when not given: a run is taken over at most twice. */
const DEFAULT_MAX_ATTEMPTS = 3;
/** Most runs one heartbeat round takes over, so one instance does not grab every orphan of a big crash at once. */
const TAKEOVER_BATCH = 10;
/**
 * Live runs per pooled database connection in the default `maxActiveRuns` (20 connections: 200 runs). A run
 * holds a connection only for a statement or a short transaction at a time, so many share one. Measured with
 * scripted runs (no model wait, so the most statements per second): 50 at once on a 5-connection pool never
 * waited 1 s for a connection, against the 30 s default acquire timeout; 200 at once with 200 ms failed midway.
 */
export const RUNS_PER_CONNECTION = 10;
/** What a refused run is told to wait before trying again; live runs end and free slots continually. */
const CAPACITY_RETRY_AFTER_SECONDS = 2;
/** How long a run's end waits for its observers (a log's last flush) before its record is finished anyway. */
const OBSERVER_END_WAIT_MS = 5000;

// Keys that would carry a trace id as data; a caller-sent one is dropped, never honoured.
const TRACE_KEYS = new Set([TRACE_METADATA_KEY, "trace_id"]);

export interface ThreadDetails extends ThreadRecord {
  /** The thread's messages, or the page asked for (`getThread(id, { messages })`), oldest first. */
  messages: SerializedMessage[];
  /** How many messages the thread holds. */
  messages_total: number;
  /** Position of `messages[0]` in the thread (0-based): pass it as `before` to read the page before this one. */
  messages_offset: number;
  artifacts: string[];
  summary_text: string | null;
  todos: unknown[] | null;
}

// Every open client per kernel, so a plugin that changes what agents are built from (skills, memory, custom
// agents) can drop their cached agents without holding a client.
const openClients = new WeakMap<Kernel, Set<AntlerClient>>();

/** Drops the cached agents of every open client on this kernel; their next run rebuilds. */
export function resetAgents(kernel: Kernel): void {
  for (const client of openClients.get(kernel) ?? []) client.resetAgent();
}

/** In-process twin of the HTTP gateway: the same runs, threads, uploads and artifacts, without HTTP. */
export class AntlerClient {
  readonly kernel: Kernel;
  private readonly defaultUser: string;
  private readonly ownsKernel: boolean;
  private readonly givenCheckpointer: BaseCheckpointSaver | undefined;
  private storage:
    | Promise<{
        checkpointer: Checkpointer | null;
        saver: BaseCheckpointSaver;
        database: AntlerDatabase;
        threads: ThreadStore;
        runs: RunStore;
        /** The run store on the database's upkeep connections: lease renewals and sweeps never wait for run traffic. */
        upkeep: RunStore;
        maxActiveRuns: number;
      }>
    | undefined;
  /** Runs past the capacity check and not yet ended (a superset of `live`: it counts runs still starting). */
  private admittedRuns = 0;
  private readonly maxActiveRuns: number | undefined;
  private readonly live = new Map<string, LiveRun>();
  /** Runs of this client waiting their turn on a thread; woken when a local run ends, so they need not poll. */
  private readonly turnWaiters = new Set<() => void>();
  /** Names this client in the run records it owns; other instances on the database address it through them. */
  readonly instanceId = randomUUID();
  private readonly leases: { heartbeatMs: number; leaseMs: number; cancelWaitMs: number };
  private heartbeat: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  /** Paused runs this client is applying the timeout decision of, so a slow one is not started twice. */
  private readonly timingOut = new Set<string>();
  /** Runs this client took over from a stopped instance and is continuing, so a round does not take one twice. */
  private readonly takingOver = new Set<string>();
  /** The executor of queued runs (`executeQueued`), while one runs. */
  private queue: QueueExecutor | undefined;
  private readonly maxAttempts: number;
  /** Holders of `sweepWhileIdle` (a serving gateway): while any, the heartbeat goes on with no live runs. */
  private idleSweepers = 0;
  /** Set by `handOverAll`: this client is shutting down and takes on no queued, orphaned or expired-pause runs. */
  private handingOver = false;
  private readonly agents = new Map<string, Promise<ReactAgent>>();
  /** The custom-agent file version each user's cached agents were last built from. */
  private readonly agentVersions = new Map<string, string>();
  private readonly models = new Map<string, ReturnType<Kernel["createModel"]>>();
  private readonly observers = new Set<RunObserver>();
  /** Checkpoint retention (`storage.checkpoint.keep`) of threads whose runs ended, in the background. */
  private readonly pruner = new BackgroundPruner(
    (threadId) => this.pruneThread(threadId),
    (err, threadId, traceId) =>
      this.kernel.logger.warn(
        { err, thread_id: threadId, trace_id: traceId },
        "checkpoint retention failed; the thread keeps its checkpoints",
      ),
  );
  /** Serialized thread messages, by message object: a values event serializes only the messages new to it. */
  private readonly serializedMessages: SerializedMessages = new WeakMap();

  constructor(options: AntlerClientOptions) {
    this.kernel = options.kernel;
    this.defaultUser = assertSafeId("user", options.userId ?? DEFAULT_USER_ID);
    this.ownsKernel = options.ownsKernel ?? false;
    this.givenCheckpointer = options.checkpointer;
    this.leases = resolveLeaseTimings(options.runLeases);
    this.maxActiveRuns = checkMaxActiveRuns(options.maxActiveRuns);
    this.maxAttempts = checkMaxAttempts(options.maxAttempts);
    const clients = openClients.get(this.kernel) ?? new Set<AntlerClient>();
    openClients.set(this.kernel, clients.add(this));
  }

  /** Boots and starts a kernel from config (file, text or object) and wraps it; `close()` closes both. */
  static async create(
    options: CreateKernelOptions &
      Pick<AntlerClientOptions, "userId" | "checkpointer" | "runLeases" | "maxActiveRuns" | "maxAttempts"> = {},
  ): Promise<AntlerClient> {
    const leases = resolveLeaseTimings(options.runLeases);
    checkMaxActiveRuns(options.maxActiveRuns);
    checkMaxAttempts(options.maxAttempts);
    const kernel = await createKernel(options);
    await kernel.start();
    return new AntlerClient({
      kernel,
      ownsKernel: true,
      userId: options.userId,
      checkpointer: options.checkpointer,
      runLeases: leases,
      ...(options.maxActiveRuns === undefined ? {} : { maxActiveRuns: options.maxActiveRuns }),
      ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
    });
  }

  private openStorage() {
    this.storage ??= (async () => {
      const checkpointer = this.givenCheckpointer ? null : await this.kernel.openCheckpointer();
      const database = await this.kernel.openDatabase({ migrations: [...threadMigrations, ...runRecordMigrations] });
      const saver = this.givenCheckpointer ?? (checkpointer as Checkpointer).saver;
      return {
        checkpointer,
        saver: fencedSaver(saver, (thread) => this.checkFence(database, thread)),
        database,
        threads: createThreadStore(database),
        runs: createRunStore(database),
        upkeep: database.upkeep ? createRunStore({ ...database, db: database.upkeep }) : createRunStore(database),
        maxActiveRuns:
          this.maxActiveRuns ??
          (database.maxConnections === undefined ? Number.POSITIVE_INFINITY : database.maxConnections * RUNS_PER_CONNECTION),
      };
    })();
    return this.storage;
  }

  /** Adds an observer of every run of this client from now on; returns the function that removes it. */
  observeRuns(observer: RunObserver): () => void {
    this.observers.add(observer);
    return () => {
      this.observers.delete(observer);
    };
  }

  /** Drops every cached agent; the next run rebuilds (after memory, skill or MCP config changes). */
  resetAgent(): void {
    this.agents.clear();
    this.agentVersions.clear();
  }

  /** The custom agents this user can select: their own, then those shipped with the distribution. */
  async listAgents(options: { userId?: string } = {}): Promise<{ agents: AgentSummary[] }> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const agents = await listCustomAgents(this.kernel, {
      userId,
      onInvalid: (name, err) => this.kernel.logger.warn({ err, agent_name: name }, "custom agent skipped: its files do not validate"),
    });
    return { agents };
  }

  /** One custom agent with its soul; another user's agent is AGENT_NOT_FOUND. */
  async getAgent(name: string, options: { userId?: string } = {}): Promise<AgentDetails> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    return describeCustomAgent(await requireCustomAgent(this.kernel, { userId, name }));
  }

  /** Creates or replaces the user's custom agent; the next turn with it uses the new files. */
  async saveAgent(name: string, agent: AgentSaveRequest, options: { userId?: string } = {}): Promise<AgentDetails> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    return saveCustomAgent(this.kernel, { userId, name, agent });
  }

  /** Deletes the user's own custom agent (not one shipped with the distribution). */
  async deleteAgent(name: string, options: { userId?: string } = {}): Promise<{ name: string; deleted: true }> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const result = await deleteCustomAgent(this.kernel, { userId, name });
    this.resetAgent();
    return result;
  }

  /**
   * The configured models this caller may run on: with `@antler/plugin-guardrails`' `authorization:`, those of
   * its role (`userRole`, else the principal's `role`, else `default_role`), as the runs' admission checks decide;
   * otherwise all of them. The gateway's `GET /api/models` answers with this for the API key's role.
   */
  async listModels(options: { userId?: string; userRole?: string; principal?: Principal; traceId?: string } = {}): Promise<ModelInfo[]> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const principal = options.principal ?? { kind: "user" as const, userId };
    return admittedModels(this.kernel, {
      userId,
      userRole: options.userRole ?? principal.role,
      internal: principal.kind === "internal",
      traceId: options.traceId,
    });
  }

  /**
   * One model this caller may run on, as `listModels` lists it (the gateway's `GET /api/models/{name}`). A model
   * that is not configured, or that the caller's role may not use, is `MODEL_NOT_FOUND` either way.
   */
  async getModel(
    name: string,
    options: { userId?: string; userRole?: string; principal?: Principal; traceId?: string } = {},
  ): Promise<ModelInfo> {
    const found = (await this.listModels(options)).find((m) => m.name === name);
    if (found) return found;
    throw new AntlerError(ErrorCodes.MODEL_NOT_FOUND, `no model ${JSON.stringify(name)} is available to this caller`, {
      hint: "List the models this caller may use with listModels() (GET /api/models); names are the `models:` entries of config.yaml.",
    });
  }

  /** Runs one turn and returns the final AI text. */
  async chat(message: string, options: RunCallOptions = {}): Promise<string> {
    let text = "";
    for await (const event of this.stream(message, options)) {
      if (event.type === "values") text = lastAiText(event.data.messages, text);
    }
    return text;
  }

  /**
   * Runs one turn and yields `values`, `messages-tuple`, `custom` and `end` events. The trace scope is bound
   * around each step of the underlying stream, never across a `yield`, so the consumer's code between events
   * runs in its own context. With the client at `maxActiveRuns`, the first step throws RUNS_AT_CAPACITY and
   * nothing of the run is recorded.
   */
  async *stream(message: string, options: RunCallOptions = {}): AsyncGenerator<StreamEvent, void, undefined> {
    const { maxActiveRuns } = await this.openStorage();
    // No await between the check and the count, so a burst of concurrent calls cannot all pass the check.
    if (this.admittedRuns >= maxActiveRuns) throw atCapacity(maxActiveRuns);
    this.admittedRuns += 1;
    try {
      yield* this.runTurn(message, options);
    } finally {
      this.admittedRuns -= 1;
    }
  }

  private async *runTurn(message: string, options: RunCallOptions): AsyncGenerator<StreamEvent, void, undefined> {
    const turn = await this.prepareTurn(options);
    const { userId, threadId } = turn;
    const { threads, runs } = await this.openStorage();
    const human = new HumanMessage({ content: message, id: randomUUID() });
    yield* this.execute({
      userId,
      threadId,
      modelName: turn.modelName,
      thinking: turn.thinking,
      traceId: options.traceId,
      runId: options.runId,
      signal: options.signal,
      input: { messages: [human] },
      inputMessageId: human.id as string,
      onAdmitted: options.onAdmitted,
      record: async ({ traceId, runId, run, admitted }) => {
        const { context, callerMetadata, kwargs } = turn.recorded(traceId, message, human.id as string);
        await threads.touch(userId, threadId);
        const strategy = kwargs.multitask_strategy;
        const input = {
          runId,
          threadId,
          userId,
          traceId,
          model: turn.modelName,
          kwargs,
          owner: { id: this.instanceId, leaseMs: this.leases.leaseMs },
        };
        if (strategy === "reject") {
          await runs.startExclusive(input);
          admitted("running");
          return { context, callerMetadata, custom: turn.custom };
        }
        const record = await runs.create({ ...input, status: "pending" });
        admitted("pending");
        if (strategy === "interrupt") await this.interruptAhead(runs, record);
        await this.waitTurn(runs, record, run.cancelled);
        // The run ahead may have changed the agent (update_agent); this turn uses what it left.
        return { context, callerMetadata, custom: await turn.loadAgent() };
      },
    });
  }

  /**
   * What every new run checks and decides before anything of it is recorded (the same for a run started here and one
   * queued): the user, thread, custom agent, model, thinking and effort, and the admission checks (role, model,
   * budget), which refuse it. `recorded` builds what its record keeps once its trace and run ids exist.
   */
  private async prepareTurn(options: RunCallOptions) {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const threadId = assertSafeId("thread", options.threadId ?? randomUUID());
    const bootstrap = options.bootstrap === true || options.context?.is_bootstrap === true;
    const agentName = options.agent ?? (typeof options.context?.agent_name === "string" ? options.context.agent_name : undefined);
    // A bootstrap run names the agent it is about to create; any other run must name one that exists.
    const loadAgent = async () =>
      agentName === undefined || bootstrap ? undefined : await requireCustomAgent(this.kernel, { userId, name: agentName });
    const custom = await loadAgent();
    const modelConfig = this.kernel.modelConfig(options.model ?? custom?.model);
    const modelName = modelConfig.name;
    const thinking = runThinking(options, custom, modelConfig, this.kernel.logger);
    const reasoningEffort = runReasoningEffort(options, modelConfig, thinking, this.kernel.logger);
    const principal = options.principal ?? { kind: "user" as const, userId };
    const internalRole = principal.kind === "internal" ? options.context?.user_role : undefined;
    const userRole = options.userRole ?? principal.role ?? (typeof internalRole === "string" ? internalRole : undefined);
    // Refusals (a role that may not use this model) come before anything is recorded: a 403, not a failed run.
    await admitRun(this.kernel, {
      userId,
      userRole,
      modelName,
      agentName,
      internal: principal.kind === "internal",
      traceId: options.traceId,
      spentSince: async (since) => (await this.openStorage()).runs.costSince(userId, since),
    });
    const recorded = (traceId: string, message: string, inputMessageId: string) => {
      const { context } = sanitizeRunContext(options.context, {
        principal,
        traceId,
        server: {
          thread_id: threadId,
          user_id: userId,
          model_name: modelName,
          thinking_enabled: thinking,
          ...(reasoningEffort !== undefined ? { reasoning_effort: reasoningEffort } : {}),
          ...(userRole !== undefined ? { user_role: userRole } : {}),
          ...(agentName !== undefined ? { agent_name: agentName } : {}),
          ...(bootstrap ? { is_bootstrap: true } : {}),
        },
      });
      // Caller metadata is copied, never mutated, and the stamp always wins: the persisted run, the header
      // and the logs must agree on one id.
      const callerMetadata: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(options.metadata ?? {})) if (!TRACE_KEYS.has(key)) callerMetadata[key] = value;
      const metadata = { ...callerMetadata, [TRACE_METADATA_KEY]: traceId };
      const multitask_strategy: MultitaskStrategy = options.multitaskStrategy ?? "reject";
      const kwargs = { input: message, input_message_id: inputMessageId, context, metadata, multitask_strategy };
      return { context, callerMetadata, kwargs };
    };
    return { userId, threadId, modelName, thinking, custom, loadAgent, recorded };
  }

  /**
   * Records a run as queued work (`pending`, no owner) and returns its record, without running it: an executor
   * (`executeQueued`, in this process or another on the database: a gateway, `antler worker`) claims and runs it, and
   * its events reach the run observers there (the run event log, so any gateway can stream it). The same checks as
   * `stream` refuse it first (role, model, budget); `multitaskStrategy` `reject` refuses a busy thread with
   * THREAD_BUSY, `enqueue` queues behind the thread's runs, `interrupt` cancels them first. This client's capacity
   * does not apply (it does not run it).
   */
  async enqueue(message: string, options: Omit<RunCallOptions, "signal" | "onAdmitted"> = {}): Promise<RunRecord> {
    const turn = await this.prepareTurn(options);
    const { userId, threadId } = turn;
    const { threads, runs } = await this.openStorage();
    const traceId = ensureTraceContext(options.traceId, (id) => id);
    const runId = options.runId ?? randomUUID();
    const { kwargs } = turn.recorded(traceId, message, randomUUID());
    if (kwargs.multitask_strategy === "reject") await this.assertThreadIdle(runs, userId, threadId);
    await threads.touch(userId, threadId);
    // Timestamps order a thread's queue: this run is created after every run already on the thread, even in the same ms.
    const ahead = await runs.listActive(userId, threadId);
    const after = ahead.at(-1)?.created_at;
    const record = await runs.create({
      runId,
      threadId,
      userId,
      traceId,
      model: turn.modelName,
      kwargs,
      status: "pending",
      ...(after ? { after } : {}),
    });
    if (kwargs.multitask_strategy === "interrupt") await this.interruptAhead(runs, record);
    this.queue?.wake();
    const { database } = await this.openStorage();
    if (database.dialect === "postgres") {
      // Executors in other processes LISTEN on it; a lost notification only delays the run to their next poll.
      const channel = queueChannel(this.kernel.config.storage.postgres_schema);
      await sql`select pg_notify(${channel}, '')`.execute(database.db).catch((err: unknown) => {
        this.kernel.logger.warn({ err, run_id: record.run_id }, "could not announce a queued run; executors find it at their next poll");
      });
    }
    return record;
  }

  /**
   * Paused runs (waiting for an approval), newest first: the user's, or with `allUsers` every user's (for operators:
   * the CLI, a console). Each record carries its `interrupt` and `resume_by`.
   */
  async listPausedRuns(options: { userId?: string; allUsers?: boolean; limit?: number } = {}): Promise<RunRecord[]> {
    const { runs } = await this.openStorage();
    const userId = options.allUsers ? undefined : assertSafeId("user", options.userId ?? this.defaultUser);
    return runs.listPaused({
      ...(userId !== undefined ? { userId } : {}),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
    });
  }

  /**
   * Runs in one status across the user's threads (or, with `allUsers`, every user's), most recently updated first:
   * `antler runs list --status paused`. Expired leases are not swept here; `getRun` does that for one run.
   */
  async listRunsByStatus(status: RunStatus, options: { userId?: string; allUsers?: boolean; limit?: number } = {}): Promise<RunRecord[]> {
    const { runs } = await this.openStorage();
    const userId = options.allUsers ? undefined : assertSafeId("user", options.userId ?? this.defaultUser);
    return runs.listByStatus(status, {
      ...(userId !== undefined ? { userId } : {}),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
    });
  }

  /** How many runs wait in the queue (pending) on this database, across users (the `/metrics` gauge). */
  async countPendingRuns(): Promise<number> {
    const { runs } = await this.openStorage();
    return runs.countPending();
  }

  /** How long the oldest pending run on this database has waited, in ms (0: none waits); the `/metrics` gauge. */
  async oldestPendingRunWaitMs(): Promise<number> {
    const { runs } = await this.openStorage();
    return runs.oldestPendingWaitMs();
  }

  /** How many runs are paused on this database, across users (the `/metrics` gauge). */
  async countPausedRuns(): Promise<number> {
    const { runs } = await this.openStorage();
    return runs.countPaused();
  }

  /**
   * Continues a paused run (an approval) with `resume` (the decision) and yields its events like `stream`: the
   * same run id and trace id, from the checkpoint it paused at. A run of another user, or none, is RUN_NOT_FOUND;
   * one that is not paused is RUN_NOT_PAUSED; a decision the pause's owner refuses (edited arguments the tool's
   * schema rejects) is RESUME_INVALID and the run stays paused. The stream opens a `run_resumed` custom event.
   */
  async *resumeStream(
    threadId: string,
    runId: string,
    resume: unknown,
    options: { userId?: string; signal?: AbortSignal; onAdmitted?: RunCallOptions["onAdmitted"] } = {},
  ): AsyncGenerator<StreamEvent, void, undefined> {
    const { maxActiveRuns } = await this.openStorage();
    if (this.admittedRuns >= maxActiveRuns) throw atCapacity(maxActiveRuns);
    this.admittedRuns += 1;
    try {
      yield* this.resumeTurn(threadId, runId, resume, { ...options, cause: "resume" });
    } finally {
      this.admittedRuns -= 1;
    }
  }

  /** `resumeStream` to the end: the run's result, `status: "paused"` again when it paused for more approvals. */
  async resume(
    threadId: string,
    runId: string,
    resume: unknown,
    options: { userId?: string; signal?: AbortSignal } = {},
  ): Promise<RunResult> {
    return collectResult(this.resumeStream(threadId, runId, resume, options));
  }

  private async *resumeTurn(
    threadId: string,
    runId: string,
    resume: unknown,
    options: { userId?: string; signal?: AbortSignal; onAdmitted?: RunCallOptions["onAdmitted"]; cause: "resume" | "timeout" },
  ): AsyncGenerator<StreamEvent, void, undefined> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { runs, threads } = await this.openStorage();
    await threads.require(userId, assertSafeId("thread", threadId));
    const record = requireRun(await runs.get(userId, runId, { sweep: false }), threadId, runId);
    if (record.status !== "paused" || !record.interrupt) throw notPaused(runId, record.status);
    const pending = record.interrupt;
    const context = { ...((record.kwargs.context as Record<string, unknown> | undefined) ?? {}) };
    const agentName = typeof context.agent_name === "string" ? context.agent_name : undefined;
    const custom =
      agentName === undefined || context.is_bootstrap === true
        ? undefined
        : await requireCustomAgent(this.kernel, { userId, name: agentName });
    const thinking = context.thinking_enabled === true;
    if (this.kernel.status === "booted") await this.kernel.start();
    // Built before the check, so what the check consults (the tools' schemas) is assembled in this process too.
    const { saver } = await this.openStorage();
    await requestTraceContext(record.trace_id, () => this.agentFor({ userId, modelName: record.model, thinking, context, saver, custom }));
    const value = await requestTraceContext(record.trace_id, () =>
      vetResume(this.kernel, { userId, threadId, runId, traceId: record.trace_id, interrupt: pending, resume }),
    );
    yield* this.execute({
      userId,
      threadId,
      modelName: record.model,
      thinking,
      traceId: record.trace_id,
      runId,
      signal: options.signal,
      input: new Command({ resume: value }),
      inputMessageId: undefined,
      onAdmitted: options.onAdmitted,
      resumed: { cause: options.cause, interruptId: pending.id, by: getCurrentTraceId() },
      attempt: record.attempt,
      record: async ({ admitted }) => {
        const claimed = await runs.claimPaused(runId, { id: this.instanceId, leaseMs: this.leases.leaseMs }, pending.id);
        if (!claimed) {
          const now = requireRun(await runs.get(userId, runId, { sweep: false }), threadId, runId);
          throw notPaused(runId, now.status, "another resume took it first");
        }
        admitted("running");
        return { context: claimed.context, callerMetadata: {}, custom };
      },
    });
  }

  /**
   * The shared body of a new run and a resumed one: trace and run scopes, the live-run entry, observers, the
   * record (`record` writes or claims it), the graph stream, and the ending: `success`, `error`, `cancelled`, or
   * `paused` when the graph stopped at an interrupt (the record keeps it; the run holds nothing afterwards).
   */
  private async *execute(start: RunStart): AsyncGenerator<StreamEvent, void, undefined> {
    const { userId, threadId, modelName, thinking } = start;
    const acceptedAt = start.waitingSince ?? Date.now();
    const { saver, runs } = await this.openStorage();
    if (this.kernel.status === "booted") await this.kernel.start();
    // A resumed run keeps its own trace id whatever scope resumes it (a request's, the heartbeat's).
    const scoped = start.resumed || start.queued ? requestTraceContext : ensureTraceContext;
    const run = await scoped(start.traceId, (scopeId) =>
      this.kernel.beginRun({ threadId, userId, signal: start.signal, traceId: scopeId, runId: start.runId }),
    );
    const { traceId, runId } = run.context;
    // Each step runs on the run's own id, never on whatever scope the consumer pulls the stream from.
    const bind = <T>(fn: () => T): T => requestTraceContext(traceId, fn);
    let outcome: "success" | "error" | "cancelled" | "paused" | "handed_over" = "cancelled";
    let failure: unknown;
    // What the record keeps of the run's model calls (cost, retried or fallen-back attempts), read when it ends.
    let endFacts: () => RunEndFacts = () => ({});
    let iterator: AsyncIterator<unknown> | undefined;
    let recorded = false;
    let handingOver = false;
    let settle: () => void = () => {};
    const live: LiveRun = {
      userId,
      threadId,
      abort: (reason) => run.abort(reason),
      handOver: () => {
        handingOver = true;
        run.abort("handed over: this instance is shutting down");
      },
      done: new Promise<void>((resolve) => {
        settle = resolve;
      }),
      recorded: false,
    };
    this.live.set(runId, live);
    // The observers present when the run starts see all of it, and no others see part of it.
    const observers = [...this.observers];
    let observed = false;
    const observe = (what: string, call: (observer: RunObserver) => void) => {
      for (const observer of observers) {
        try {
          call(observer);
        } catch (err) {
          this.kernel.logger.warn({ err, run_id: runId, trace_id: traceId }, `a run observer failed at ${what}`);
        }
      }
    };
    const admitted = (status: "running" | "pending") => {
      recorded = true;
      live.recorded = true;
      this.startHeartbeat();
      observed = observers.length > 0;
      observe("runStarted", (o) => o.runStarted({ runId, threadId, userId, traceId }));
      start.onAdmitted?.(status);
    };
    let pause: PausedInterrupt | undefined;
    let context: Record<string, unknown> = {};
    try {
      if (start.resumed) {
        const resuming = observers.map((o) =>
          Promise.resolve()
            .then(() => o.runResuming?.({ runId, threadId, userId, traceId }))
            .catch((err: unknown) =>
              this.kernel.logger.warn({ err, run_id: runId, trace_id: traceId }, "a run observer failed at runResuming"),
            ),
        );
        await settledWithin(Promise.all(resuming), OBSERVER_END_WAIT_MS);
      }
      const prepared = await start.record({ traceId, runId, run, admitted });
      // Running from here on: its record's end, pause, checkpoints and non-idempotent tool calls are fenced.
      live.fence = { ownerId: this.instanceId, attempt: start.attempt ?? 1 };
      if (runQueueChannel.hasSubscribers && start.resumed?.cause !== "resume" && start.resumed?.cause !== "timeout") {
        const via = start.resumed ? "takeover" : start.queued ? "queue" : "new";
        const event: RunQueueEvent = { type: "started", via, wait_ms: Date.now() - acceptedAt };
        runQueueChannel.publish(event);
      }
      context = prepared.context;
      const { callerMetadata, custom } = prepared;
      const agent = await bind(() => this.agentFor({ userId, modelName, thinking, context, saver, custom }));
      // Checkpoints are keyed per user, so two users' thread ids can never meet.
      const configurable = { thread_id: checkpointThreadId(userId, threadId) };
      // A resumed run brings no message: "" matches none, so its first values event is all history (never re-emitted).
      const translator = new StreamTranslator({ inputMessageId: start.inputMessageId ?? "", serialized: this.serializedMessages });
      endFacts = () => {
        const cost = translator.cost;
        return { costUsd: Object.keys(cost.by_model).length > 0 ? cost.usd : null, modelAttempts: translator.modelAttempts };
      };
      if (start.resumed) {
        const event: StreamEvent = {
          type: "custom",
          data: {
            type: RUN_RESUMED_EVENT,
            run_id: runId,
            thread_id: threadId,
            trace_id: traceId,
            cause: start.resumed.cause,
            ...(start.resumed.interruptId !== undefined ? { interrupt_id: start.resumed.interruptId } : {}),
            attempt: start.attempt ?? 1,
          },
        };
        this.kernel.logger.info(
          {
            run_id: runId,
            trace_id: traceId,
            cause: start.resumed.cause,
            resumed_by_trace_id: start.resumed.by,
            attempt: start.attempt ?? 1,
          },
          start.resumed.cause === "takeover"
            ? "run taken over from a stopped instance; continuing from its last checkpoint"
            : "paused run resumed",
        );
        if (observed) observe("runEvent", (o) => o.runEvent(runId, event));
        yield event;
      }
      const stream = await bind(() =>
        agent.stream(
          start.input as never,
          {
            configurable,
            context: withRunContext(context, run.context),
            streamMode: ["values", "messages", "custom"],
            recursionLimit: runtimeConfig(this.kernel.config).recursion_limit,
            signal: run.context.signal,
            // Each step's checkpoint is stored before the next step starts: a tool never runs ahead of the checkpoint
            // that holds its call, so an instance that takes the run over sees every call that may have started.
            durability: "sync",
            // Caller metadata rides as ONE key: LangChain copies callback metadata key by key for every child
            // run, so spreading a caller's many keys here made each step quadratic in their number.
            metadata: {
              run_id: runId,
              user_id: userId,
              [TRACE_METADATA_KEY]: traceId,
              ...(Object.keys(callerMetadata).length > 0 ? { caller_metadata: callerMetadata } : {}),
            },
          } as never,
        ),
      );
      iterator = (stream as unknown as AsyncIterable<unknown>)[Symbol.asyncIterator]();
      for (;;) {
        const step = await bind(() => Promise.race([(iterator as AsyncIterator<unknown>).next(), run.cancelled]));
        if (step.done) break;
        const [mode, data] = step.value as [string, unknown];
        const interrupts = mode === "values" ? (data as { __interrupt__?: unknown }).__interrupt__ : undefined;
        if (Array.isArray(interrupts)) {
          // LangGraph's own frame: the graph stopped at an interrupt. Only the first is kept; Antler's pauses raise one.
          pause ??= toPausedInterrupt(interrupts[0]);
          continue;
        }
        for (const event of translator.translate(mode, data)) {
          if (observed) observe("runEvent", (o) => o.runEvent(runId, event));
          yield event;
        }
      }
      const values = translator.finalValues;
      if (values?.title) await this.openStorage().then(({ threads }) => threads.touch(userId, threadId, { title: values.title as string }));
      if (pause) {
        const expires = pause.value.expires_at;
        const resumeBy = typeof expires === "string" && !Number.isNaN(Date.parse(expires)) ? new Date(expires).toISOString() : null;
        // Out of the heartbeat first: a paused record has no lease to renew.
        live.recorded = false;
        if (!(await runs.pause(runId, { interrupt: pause, context }, resumeBy, endFacts(), live.fence))) {
          throw new AntlerError(RuntimeErrorCodes.STATE_CONFLICT, `run ${runId} ended elsewhere while it paused`, {
            hint: "It was cancelled (or its record deleted) meanwhile; start a new run.",
          });
        }
        recorded = false;
        outcome = "paused";
        this.kernel.logger.info({ run_id: runId, trace_id: traceId, interrupt_id: pause.id, kind: pause.value.kind }, "run paused");
        const paused: StreamEvent = {
          type: "custom",
          data: {
            type: RUN_PAUSED_EVENT,
            run_id: runId,
            thread_id: threadId,
            trace_id: traceId,
            interrupt: pause.value,
            interrupt_id: pause.id,
          },
        };
        if (observed) observe("runEvent", (o) => o.runEvent(runId, paused));
        yield paused;
      } else {
        outcome = "success";
      }
      const end: StreamEvent = {
        type: "end",
        data: {
          thread_id: threadId,
          run_id: runId,
          trace_id: traceId,
          usage: translator.usage,
          stop_reason: pause ? "paused" : (values?.stop_reason ?? null),
          cost: translator.cost,
        },
      };
      if (observed) observe("runEvent", (o) => o.runEvent(runId, end));
      yield end;
    } catch (err) {
      const cancelled = run.context.signal.aborted;
      outcome = cancelled ? (handingOver && live.fence ? "handed_over" : "cancelled") : "error";
      // Once the run is cancelled, whatever the step in flight threw is part of the cancel: LangChain rejects with
      // the abort reason as a plain Error, and when both had settled before a step's race, that one could win.
      // The caller always gets RUN_CANCELLED (or RUN_HANDED_OVER), never an internal error.
      failure =
        outcome === "handed_over"
          ? handedOverError(runId, threadId, traceId)
          : cancelled
            ? await run.cancelled.catch((reason: unknown) => reason)
            : err;
      throw failure;
    } finally {
      // Reached on success, on error, and when the consumer stops iterating early (a cancel).
      if (outcome === "cancelled") run.abort("stream closed");
      const open = iterator;
      if (open?.return) {
        await bind(async () => {
          await open.return?.();
        }).catch(() => undefined);
      }
      // Observers hear a pause as a success (the stream ended cleanly, the record says paused); runEnd hears `paused`.
      // A run handed over has not ended: its record stays running, and the kernel's run scope ends as cancelled here.
      const ended = outcome === "paused" ? "success" : outcome === "handed_over" ? "cancelled" : outcome;
      try {
        if (observed) {
          const endings = observers.map((o) =>
            Promise.resolve()
              .then(() =>
                outcome === "handed_over" && o.runHandedOver ? o.runHandedOver(runId, failure) : o.runEnded(runId, ended, failure),
              )
              .catch((err: unknown) =>
                this.kernel.logger.warn({ err, run_id: runId, trace_id: traceId }, "a run observer failed at runEnded"),
              ),
          );
          await settledWithin(Promise.all(endings), OBSERVER_END_WAIT_MS);
        }
        if (recorded && outcome === "handed_over") {
          live.recorded = false;
          // Its lease expires now, so the next instance's heartbeat takes it over (attempt + 1) without waiting a lease.
          const released = await runs.releaseLease(runId, live.fence as RunFence).catch((err: unknown) => {
            this.kernel.logger.warn(
              { err, run_id: runId, trace_id: traceId },
              "could not hand a run over; it is taken over once its lease expires",
            );
            return false;
          });
          if (released)
            this.kernel.logger.info(
              { run_id: runId, trace_id: traceId },
              "run handed over: another instance continues it from its last checkpoint",
            );
        } else if (recorded && outcome !== "paused") {
          // Out of the heartbeat from here on: the record is about to end, and that is no news to this client.
          live.recorded = false;
          const error = failure === undefined ? null : failure instanceof Error ? failure.message : String(failure);
          await runs.finish(runId, ended, ended === "error" ? error : null, endFacts(), live.fence).catch((err: unknown) => {
            this.kernel.logger.warn({ err, run_id: runId, trace_id: traceId }, "could not record the end of a run");
          });
        }
        // The run scope ends either way; the kernel's runEnd hook hears `paused` (the record keeps the run resumable).
        await run.end(outcome === "handed_over" ? "cancelled" : outcome, failure);
      } finally {
        this.live.delete(runId);
        if (this.live.size === 0 && this.idleSweepers === 0) this.stopHeartbeat();
        if (recorded) this.pruner.request(checkpointThreadId(userId, threadId), traceId);
        settle();
        // The thread may be free now: queued runs of this client look again at once, and so does its executor.
        for (const wake of [...this.turnWaiters]) wake();
        this.queue?.wake();
      }
    }
  }

  /** Runs one turn to the end and returns its result (the in-process `POST /runs/wait`). */
  async invoke(message: string, options: RunCallOptions = {}): Promise<RunResult> {
    return collectResult(this.stream(message, options));
  }

  /** Creates a thread for the user (a fresh UUID without `threadId`). Trace ids are never kept in thread metadata. */
  async createThread(options: CreateThreadOptions = {}): Promise<ThreadRecord> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const threadId = assertSafeId("thread", options.threadId ?? randomUUID());
    const { threads } = await this.openStorage();
    const existing = await threads.get(userId, threadId);
    if (existing) {
      if (options.ifExists === "raise") {
        throw new AntlerError(RuntimeErrorCodes.STATE_CONFLICT, `thread ${JSON.stringify(threadId)} already exists`, {
          hint: 'Use another thread_id, or if_exists: "do_nothing" to get the existing thread.',
        });
      }
      return existing;
    }
    const metadata: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(options.metadata ?? {})) if (!TRACE_KEYS.has(key)) metadata[key] = value;
    return threads.touch(userId, threadId, { metadata });
  }

  /** The thread's record; another user's thread is THREAD_NOT_FOUND. */
  async getThreadRecord(threadId: string, options: { userId?: string } = {}): Promise<ThreadRecord> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { threads } = await this.openStorage();
    return threads.require(userId, assertSafeId("thread", threadId));
  }

  /** Deletes a thread: live runs are cancelled, then its record, run records, checkpoints and files go. */
  async deleteThread(threadId: string, options: { userId?: string } = {}): Promise<{ thread_id: string; deleted: true }> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { threads, runs, saver } = await this.openStorage();
    await threads.require(userId, assertSafeId("thread", threadId));
    const waits: Promise<void>[] = [];
    for (const live of this.live.values()) {
      if (live.userId === userId && live.threadId === threadId) {
        live.abort("thread deleted");
        waits.push(live.done);
      }
    }
    await settledWithin(Promise.all(waits), 5000);
    await saver.deleteThread(checkpointThreadId(userId, threadId));
    await runs.deleteThread(userId, threadId);
    await threads.delete(userId, threadId);
    await rm(threadPaths(this.kernel.paths.baseDir, userId, threadId).threadDir, { recursive: true, force: true });
    return { thread_id: threadId, deleted: true };
  }

  /**
   * Merges `metadata` into the thread's (a key set to null is removed) and returns the record. Trace ids are never
   * kept in thread metadata.
   */
  async updateThread(threadId: string, options: { userId?: string; metadata: Record<string, unknown> }): Promise<ThreadRecord> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { threads } = await this.openStorage();
    const record = await threads.require(userId, assertSafeId("thread", threadId));
    const metadata = { ...record.metadata };
    for (const [key, value] of Object.entries(options.metadata)) {
      if (TRACE_KEYS.has(key)) continue;
      if (value === null) delete metadata[key];
      else metadata[key] = value;
    }
    return threads.touch(userId, threadId, { metadata });
  }

  /**
   * Copies a thread to a new one of the same user: its record's metadata and title, its latest checkpoint (the
   * messages and the rest of the state; written as a `fork`, so the copy continues from there with no history
   * before it), and its files (uploads, outputs). A busy thread is THREAD_BUSY: its latest checkpoint is mid-turn.
   */
  async copyThread(threadId: string, options: { userId?: string; newThreadId?: string } = {}): Promise<ThreadRecord> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const newThreadId = assertSafeId("thread", options.newThreadId ?? randomUUID());
    const { threads, runs, saver } = await this.openStorage();
    const source = await threads.require(userId, assertSafeId("thread", threadId));
    await this.assertThreadIdle(runs, userId, threadId);
    if (await threads.get(userId, newThreadId)) {
      throw new AntlerError(RuntimeErrorCodes.STATE_CONFLICT, `thread ${JSON.stringify(newThreadId)} already exists`, {
        hint: "Copy to a new thread id (or leave it out for a fresh one).",
      });
    }
    const tuple = await saver.getTuple({ configurable: { thread_id: checkpointThreadId(userId, threadId), checkpoint_ns: "" } });
    if (tuple) {
      await saver.put(
        { configurable: { thread_id: checkpointThreadId(userId, newThreadId), checkpoint_ns: "" } },
        tuple.checkpoint,
        { ...tuple.metadata, source: "fork", step: tuple.metadata?.step ?? -1, parents: {} },
        tuple.checkpoint.channel_versions,
      );
    }
    const from = threadPaths(this.kernel.paths.baseDir, userId, threadId).threadDir;
    const to = threadPaths(this.kernel.paths.baseDir, userId, newThreadId).threadDir;
    await cp(from, to, { recursive: true, errorOnExist: false, force: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
    return threads.touch(userId, newThreadId, { metadata: source.metadata, title: source.title });
  }

  /** Sets the thread's title (null clears it, so a title model may name it again). */
  async renameThread(threadId: string, options: { userId?: string; title: string | null }): Promise<ThreadRecord> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { threads } = await this.openStorage();
    await threads.require(userId, assertSafeId("thread", threadId));
    return threads.touch(userId, threadId, { title: options.title });
  }

  /**
   * A new thread that holds this one's messages before `beforeMessageId` (and its files), to continue differently
   * from there: an edited question, or the same one asked again. The source thread is left as it was, so both
   * branches stay readable; the branch's metadata names its source (`branch_of`, `branch_message_id`). Reads the
   * source's messages once (an explicit action, not a per-turn cost). An id the thread does not hold is
   * MESSAGE_NOT_FOUND; a busy thread is THREAD_BUSY.
   */
  async branchThread(
    threadId: string,
    options: { userId?: string; beforeMessageId: string; newThreadId?: string; title?: string | null },
  ): Promise<ThreadRecord & { branch_at: number }> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const source = await this.getThreadRecord(threadId, { userId });
    const graph = await this.threadGraph(userId);
    const snapshot = await graph.getState({ configurable: { thread_id: checkpointThreadId(userId, threadId), checkpoint_ns: "" } });
    const messages = ((snapshot.values as { messages?: Array<{ id?: string }> }).messages ?? []) as Array<{ id?: string }>;
    const at = messages.findIndex((m) => m.id === options.beforeMessageId);
    if (at === -1) {
      throw new AntlerError(
        RuntimeErrorCodes.MESSAGE_NOT_FOUND,
        `thread ${JSON.stringify(threadId)} has no message ${JSON.stringify(options.beforeMessageId)}`,
        {
          where: "message_id",
          hint: "Branch before one of the thread's messages (GET /api/threads/{id}/state lists them with their ids).",
        },
      );
    }
    const copy = await this.copyThread(threadId, { userId, ...(options.newThreadId ? { newThreadId: options.newThreadId } : {}) });
    await this.updateThreadState(copy.thread_id, {
      userId,
      values: { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...messages.slice(0, at)] },
    });
    await this.updateThread(copy.thread_id, { userId, metadata: { branch_of: threadId, branch_message_id: options.beforeMessageId } });
    const title = options.title !== undefined ? options.title : source.title === null ? null : `${source.title} (branch)`;
    const record = await this.renameThread(copy.thread_id, { userId, title });
    return { ...record, branch_at: at };
  }

  /**
   * The thread's checkpoints, newest first (what `storage.checkpoint.keep` retained). Each carries the whole state
   * at that point, so ask for a few at a time.
   */
  async getThreadHistory(threadId: string, options: ThreadHistoryOptions = {}): Promise<ThreadCheckpoint[]> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { threads } = await this.openStorage();
    await threads.require(userId, assertSafeId("thread", threadId));
    const graph = await this.threadGraph(userId);
    const limit = Math.min(1000, Math.max(1, Math.trunc(options.limit ?? 10)));
    const out: ThreadCheckpoint[] = [];
    const config = { configurable: { thread_id: checkpointThreadId(userId, threadId), checkpoint_ns: "" } };
    for await (const snapshot of graph.getStateHistory(config, {
      limit,
      ...(options.before ? { before: { configurable: { checkpoint_id: options.before } } } : {}),
      ...(options.metadata ? { filter: options.metadata } : {}),
    })) {
      out.push(toThreadCheckpoint(snapshot));
    }
    return out;
  }

  /**
   * The thread's state at a checkpoint (default its latest), with the nodes due next. A thread without
   * checkpoints answers an empty state with `checkpoint_id` "". A checkpoint the thread does not have (or no
   * longer keeps) is CHECKPOINT_NOT_FOUND.
   */
  async getThreadState(threadId: string, options: { userId?: string; checkpointId?: string } = {}): Promise<ThreadCheckpoint> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { threads, saver } = await this.openStorage();
    await threads.require(userId, assertSafeId("thread", threadId));
    const config = {
      configurable: {
        thread_id: checkpointThreadId(userId, threadId),
        checkpoint_ns: "",
        ...(options.checkpointId ? { checkpoint_id: options.checkpointId } : {}),
      },
    };
    if (options.checkpointId && !(await saver.getTuple(config))) throw checkpointNotFound(threadId, options.checkpointId);
    const graph = await this.threadGraph(userId);
    return toThreadCheckpoint(await graph.getState(config));
  }

  /**
   * Writes a new checkpoint on the thread (LangGraph's `updateState`), through the graph's reducers, outside any
   * run; the next run continues from it. A busy thread is THREAD_BUSY; a `values` key or `asNode` the graph does
   * not have is STATE_CONFLICT naming it. Answers the new checkpoint's id.
   */
  async updateThreadState(threadId: string, options: UpdateThreadStateOptions): Promise<{ checkpoint_id: string }> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { threads, runs, saver } = await this.openStorage();
    await threads.require(userId, assertSafeId("thread", threadId));
    await this.assertThreadIdle(runs, userId, threadId);
    const config = {
      configurable: {
        thread_id: checkpointThreadId(userId, threadId),
        checkpoint_ns: "",
        ...(options.checkpointId ? { checkpoint_id: options.checkpointId } : {}),
      },
    };
    if (options.checkpointId && !(await saver.getTuple(config))) throw checkpointNotFound(threadId, options.checkpointId);
    const graph = await this.threadGraph(userId);
    let next: { configurable?: Record<string, unknown> };
    try {
      next = await graph.updateState(config, options.values, options.asNode);
    } catch (error) {
      // LangGraph's refusals (an unknown node, a key no channel holds, an ambiguous writer) are the caller's to fix.
      if (error instanceof Error && /InvalidUpdate|not found|Ambiguous|Unknown|does not exist/i.test(`${error.name} ${error.message}`)) {
        throw new AntlerError(RuntimeErrorCodes.STATE_CONFLICT, `the state update was refused: ${error.message.split("\n")[0]}`, {
          where: options.asNode !== undefined ? "as_node" : "values",
          hint: "Write keys the thread's state has (messages, title, todos, ...) as one of the graph's nodes.",
        });
      }
      throw error;
    }
    await threads.touch(userId, threadId);
    return { checkpoint_id: String(next.configurable?.checkpoint_id ?? "") };
  }

  /**
   * The lead agent's graph (nodes and edges, LangGraph's JSON drawing), as built for this user with the default
   * model or the custom agent's; `xray` also draws subgraphs.
   */
  async getAgentGraph(options: { userId?: string; agent?: string; xray?: boolean | number } = {}): Promise<Record<string, unknown>> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const graph = await this.threadGraph(userId, options.agent);
    const drawn = await graph.getGraphAsync({ ...(options.xray !== undefined ? { xray: options.xray } : {}) });
    return drawn.toJSON() as unknown as Record<string, unknown>;
  }

  /** The compiled graph that reads and writes the user's thread checkpoints (the lead agent's, as a run builds it). */
  private async threadGraph(userId: string, agentName?: string) {
    const { saver } = await this.openStorage();
    if (this.kernel.status === "booted") await this.kernel.start();
    const custom = agentName === undefined ? undefined : await requireCustomAgent(this.kernel, { userId, name: agentName });
    const modelConfig = this.kernel.modelConfig(custom?.model);
    const thinking = (custom?.thinking ?? true) && modelConfig.supports_thinking;
    const context: Record<string, unknown> = {
      user_id: userId,
      model_name: modelConfig.name,
      thinking_enabled: thinking,
      ...(agentName !== undefined ? { agent_name: agentName } : {}),
    };
    const agent = await this.agentFor({ userId, modelName: modelConfig.name, thinking, context, saver, custom });
    return agent.graph;
  }

  /** The thread's run records, newest first; another user's thread is THREAD_NOT_FOUND. */
  async listRuns(threadId: string, options: { userId?: string; limit?: number; offset?: number } = {}): Promise<RunRecord[]> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { threads, runs } = await this.openStorage();
    await threads.require(userId, assertSafeId("thread", threadId));
    return runs.list(userId, threadId, options);
  }

  /**
   * One run record of the user's thread, or RUN_NOT_FOUND. A run whose process stopped renewing its lease is
   * reported (and recorded) as an error, never as running.
   */
  async getRun(threadId: string, runId: string, options: { userId?: string } = {}): Promise<RunRecord> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { runs } = await this.openStorage();
    return requireRun(await runs.get(userId, runId), threadId, runId);
  }

  /**
   * Cancels a running run and returns its status. A run live in this client is aborted through its
   * AbortSignal. A run held by another instance on the same database gets a cancel request in its record,
   * which its owner reads at its next heartbeat; this waits up to `runLeases.cancelWaitMs` for the record to
   * end and answers `running` when it has not yet (the request stays, and the owner still honours it). A run
   * whose owner died (lease expired) is finished as cancelled here. A run that already ended is a
   * STATE_CONFLICT naming its status.
   */
  async cancelRun(
    threadId: string,
    runId: string,
    options: { userId?: string } = {},
  ): Promise<{ run_id: string; thread_id: string; status: RunStatus }> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { runs } = await this.openStorage();
    // Read without the orphan sweep: cancelling an orphan ends it cancelled, not as an error.
    const record = requireRun(await runs.get(userId, runId, { sweep: false }), threadId, runId);
    const answer = (status: RunStatus) => ({ run_id: runId, thread_id: threadId, status });
    const live = this.live.get(runId);
    if (live && live.userId === record.user_id) {
      live.abort("cancelled by request");
      // A stream winds down on its consumer's next pull; one that nobody is reading still counts as cancelled
      // now (the record is the truth, and its own finish later is a no-op).
      await settledWithin(live.done, 1000);
      await runs.finish(runId, "cancelled");
      return answer(requireRun(await runs.get(userId, runId, { sweep: false }), threadId, runId).status);
    }
    if (record.status === "paused") {
      // Nothing runs it: ending the record is the whole cancel (its checkpoint keeps the unanswered calls).
      await runs.finish(runId, "cancelled");
      return answer(requireRun(await runs.get(userId, runId, { sweep: false }), threadId, runId).status);
    }
    if (record.status !== "running" && record.status !== "pending") throw alreadyEnded(runId, record.status);
    // Queued and not claimed by any executor: nothing runs it, so ending its record is the whole cancel.
    if (record.status === "pending" && (await runs.cancelQueued(runId))) return answer("cancelled");
    if ((await runs.sweepExpired({ runIds: [runId], as: "cancelled" })).length > 0) return answer("cancelled");
    if (!(await runs.requestCancel(runId))) {
      // It ended between the read and the request.
      return answer(requireRun(await runs.get(userId, runId, { sweep: false }), threadId, runId).status);
    }
    const deadline = Date.now() + this.leases.cancelWaitMs;
    const pollMs = Math.min(250, Math.max(10, Math.floor(this.leases.heartbeatMs / 5)));
    for (;;) {
      const current = requireRun(await runs.get(userId, runId, { sweep: false }), threadId, runId);
      if (current.status !== "running") return answer(current.status);
      // The owner may die while we wait; then nobody else will honour the request.
      if ((await runs.sweepExpired({ runIds: [runId], as: "cancelled" })).length > 0) return answer("cancelled");
      if (Date.now() >= deadline) return answer("running");
      await delay(pollMs);
    }
  }

  /**
   * THREAD_BUSY while a run is running, queued or paused on the thread: its latest checkpoint is mid-turn (a paused
   * run's holds the calls waiting for a decision), so it must not be copied or written over.
   */
  private async assertThreadIdle(runs: RunStore, userId: string, threadId: string): Promise<void> {
    const active = await runs.listActive(userId, threadId);
    if (active[0]) throw threadBusyError(threadId, { run_id: active[0].run_id, status: active[0].status as "running" | "pending" });
    const [paused] = await runs.listPaused({ userId, threadId, limit: 1 });
    if (paused) throw threadBusyError(threadId, { run_id: paused.run_id, status: "paused" });
  }

  /**
   * `interrupt`: asks every run ahead of `record` on its thread to stop. Runs live here are aborted; runs of
   * another instance get a cancel request that their owner honours at its next heartbeat.
   */
  private async interruptAhead(runs: RunStore, record: RunRecord): Promise<void> {
    for (const other of await runs.listActive(record.user_id, record.thread_id)) {
      if (other.run_id === record.run_id) continue;
      const ahead = other.created_at < record.created_at || (other.created_at === record.created_at && other.run_id < record.run_id);
      if (!ahead) continue;
      const live = this.live.get(other.run_id);
      if (live) live.abort("interrupted by a newer run on the thread (multitask_strategy interrupt)");
      else if (!(await runs.cancelQueued(other.run_id))) await runs.requestCancel(other.run_id);
    }
    // A paused run ahead holds the thread too; nothing runs it, so ending its record is the cancel.
    for (const paused of await runs.listPaused({ userId: record.user_id, threadId: record.thread_id })) {
      await runs.finish(paused.run_id, "cancelled");
    }
  }

  /**
   * Waits until the queued run is promoted to running. Local runs ending wake it at once; runs of other
   * instances are seen by polling. A cancel (its signal, or a request from another instance) ends the wait.
   */
  private async waitTurn(runs: RunStore, record: RunRecord, cancelled: Promise<never>): Promise<void> {
    const pollMs = Math.min(250, Math.max(10, Math.floor(this.leases.heartbeatMs / 5)));
    for (;;) {
      const turn = await runs.promote(record, this.leases.leaseMs);
      if (turn.kind === "started") return;
      if (turn.kind === "stop") {
        this.live.get(record.run_id)?.abort(turn.reason);
        await cancelled;
      }
      let wake: () => void = () => {};
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
      });
      this.turnWaiters.add(wake);
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([woken, cancelled, new Promise<void>((resolve) => (timer = setTimeout(resolve, pollMs)))]);
      } finally {
        clearTimeout(timer);
        this.turnWaiters.delete(wake);
      }
    }
  }

  /** Runs live in this client right now. */
  get activeRuns(): number {
    return this.live.size;
  }

  /**
   * Aborts every live run (for a server shutting down) and waits up to `waitMs` for them to end. A stream
   * whose consumer stopped pulling ends only when it is pulled or returned, so the wait is bounded.
   */
  async cancelAll(reason: unknown = "shutting down", waitMs = 5000): Promise<void> {
    const waits = [...this.live.values()].map((live) => {
      live.abort(reason);
      return live.done;
    });
    await settledWithin(Promise.all(waits), waitMs);
  }

  /**
   * For a server shutting down without losing work: stops every live run that has a durable record here without
   * ending it (its record stays `running`, its lease expires at once, its event log keeps what it has), so another
   * instance's heartbeat takes it over and continues it from its last checkpoint, or this one does after a restart.
   * Their streams end with RUN_HANDED_OVER. Runs not yet admitted are cancelled. Waits up to `waitMs`; returns how
   * many runs were handed over.
   */
  async handOverAll(waitMs = 5000): Promise<number> {
    this.handingOver = true;
    let handed = 0;
    const waits = [...this.live.values()].map((live) => {
      if (live.recorded && live.fence) {
        handed += 1;
        live.handOver();
      } else live.abort("shutting down");
      return live.done;
    });
    await settledWithin(Promise.all(waits), waitMs);
    return handed;
  }

  private async agentFor(input: {
    userId: string;
    modelName: string;
    thinking: boolean;
    context: Record<string, unknown>;
    saver: BaseCheckpointSaver;
    custom: CustomAgent | undefined;
  }): Promise<ReactAgent> {
    const { userId, modelName, thinking, context, saver, custom } = input;
    // The run's own effort, stamped on its context when it began (so a resumed run keeps it).
    const effort = thinking ? contextEffort(context) : undefined;
    const modelConfig = this.kernel.modelConfig(modelName);
    const info = this.kernel.listModels().find((m) => m.name === modelName);
    const entries = await this.kernel.assembleTools({
      modelName,
      context,
      subagentEnabled: subagentsEnabled(this.kernel.config),
      groups: custom?.toolGroups,
    });
    const tools = entries.map((entry) => entry.tool);
    const idempotent = new Set(entries.filter((entry) => entry.idempotent === true).map((entry) => entry.tool.name));
    // What changes the built agent: who (prompts and files are per user), the model, the tool set (names and
    // schemas), the custom agent's files, and the run flags that switch middleware or tools on and off.
    const key = JSON.stringify([
      userId,
      modelConfig.name,
      tools.map(toolFingerprint),
      [...idempotent],
      context.non_interactive === true,
      context.is_bootstrap === true,
      context.agent_name ?? null,
      custom?.version ?? null,
      context.plan_mode ?? null,
      thinking,
      effort ?? null,
    ]);
    if (custom) this.dropStaleAgents(userId, custom);
    const modelKey = `${modelName}\0${thinking}\0${effort ?? ""}`;
    let agent = this.agents.get(key);
    if (!agent) {
      agent = (async () => {
        let model = this.models.get(modelKey);
        if (!model) {
          model = this.kernel.createModel(modelName, { thinking, ...(effort ? { reasoningEffort: effort } : {}) });
          this.models.set(modelKey, model);
        }
        const built = await buildLeadAgent({
          kernel: this.kernel,
          model: await model,
          modelName,
          modelInfo: info,
          checkpointer: saver,
          context,
          tools,
          promptSections: custom ? [soulSection(custom)] : [],
          innermost: [
            toolJournalMiddleware({
              idempotent,
              start: (runId, call) => this.startToolCall(runId, call),
              forget: async (runId, callId) => forgetToolCall((await this.openStorage()).database.db as never, runId, callId),
            }),
          ],
        });
        return built.agent;
      })();
      agent.catch(() => {
        this.agents.delete(key);
        this.models.delete(modelKey);
      });
      this.agents.set(key, agent);
    }
    return agent;
  }

  /** After `setup_agent`, `update_agent` or an edit elsewhere, the user's agents built from older files go. */
  private dropStaleAgents(userId: string, custom: CustomAgent): void {
    const id = `${userId}\0${custom.name}`;
    if (this.agentVersions.get(id) === custom.version) return;
    this.agentVersions.set(id, custom.version);
    for (const key of this.agents.keys()) {
      const [user, , , , , name, version] = JSON.parse(key) as unknown[];
      if (user === userId && name === custom.name && version !== custom.version) this.agents.delete(key);
    }
  }

  async listThreads(options: { limit?: number; offset?: number; userId?: string } = {}): Promise<ThreadRecord[]> {
    const { threads } = await this.openStorage();
    return threads.list(assertSafeId("user", options.userId ?? this.defaultUser), options);
  }

  /**
   * A thread's record and current state; another user's thread is THREAD_NOT_FOUND. `messages: { limit, before }`
   * reads one page of the messages (the `limit` just before position `before`, default the end) and only that page
   * from storage; without it every message is read.
   */
  async getThread(threadId: string, options: { userId?: string; messages?: MessagePageRequest } = {}): Promise<ThreadDetails> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { threads, saver } = await this.openStorage();
    const record = await threads.require(userId, assertSafeId("thread", threadId));
    const page = await readMessagePage(
      saver,
      { configurable: { thread_id: checkpointThreadId(userId, threadId), checkpoint_ns: "" } },
      options.messages ?? {},
    );
    const values = page.values;
    return {
      ...record,
      messages: page.messages.map(serializeMessage),
      messages_total: page.total,
      messages_offset: page.offset,
      artifacts: (values.artifacts as string[] | undefined) ?? [],
      summary_text: (values.summary_text as string | null | undefined) ?? null,
      todos: (values.todos as unknown[] | undefined) ?? null,
    };
  }

  /**
   * Copies a local file into the thread's uploads; directories are rejected before anything is copied. With
   * `uploads.auto_convert_documents`, a PDF/DOCX/XLSX/PPTX also gets a Markdown copy (`record.markdown`), or
   * `record.conversion_note` saying why not; a document that cannot be converted is still uploaded.
   */
  async uploadFile(threadId: string, localPath: string, options: { userId?: string; filename?: string } = {}): Promise<UploadRecord> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { threads } = await this.openStorage();
    const paths = threadPaths(this.kernel.paths.baseDir, userId, assertSafeId("thread", threadId));
    const { uploads } = runtimeConfig(this.kernel.config);
    const record = await saveUpload(paths, localPath, {
      maxBytes: uploads.max_file_bytes,
      maxFiles: uploads.max_files,
      ...(options.filename === undefined ? {} : { filename: options.filename }),
    });
    if (uploads.auto_convert_documents) {
      // Imported here so a kernel with the option off never loads the conversion code or its libraries.
      const { convertUploadedDocument } = await import("../stores/document-conversion.js");
      const outcome = await convertUploadedDocument(paths, record, {
        maxPages: uploads.max_pages,
        maxMarkdownBytes: uploads.max_markdown_bytes,
      });
      if (outcome?.status === "converted") {
        const { virtual_path, size, truncated } = outcome.markdown;
        record.markdown = { virtual_path, size, truncated };
      } else if (outcome?.status === "failed") {
        record.conversion_note = outcome.note;
      }
    }
    await threads.touch(userId, threadId);
    return record;
  }

  /** A file the agent produced (bytes and MIME type), by its virtual path; only for the thread's owner. */
  async getArtifact(threadId: string, virtualPath: string, options: { userId?: string } = {}): Promise<Artifact> {
    const userId = assertSafeId("user", options.userId ?? this.defaultUser);
    const { threads } = await this.openStorage();
    if (!(await threads.get(userId, assertSafeId("thread", threadId)))) {
      throw new AntlerError(RuntimeErrorCodes.ARTIFACT_NOT_FOUND, `no artifact ${virtualPath} in thread ${threadId}`, {
        hint: "Check the thread id and the path.",
      });
    }
    return readArtifact(threadPaths(this.kernel.paths.baseDir, userId, threadId), virtualPath);
  }

  /** Resolves once the background work finished runs started (checkpoint retention) is done. */
  async idle(): Promise<void> {
    await this.pruner.idle();
  }

  /** Retention of one checkpoint thread, unless a run of this client is on it (that run's end asks again). */
  private async pruneThread(checkpointThread: string): Promise<void> {
    for (const live of this.live.values()) if (checkpointThreadId(live.userId, live.threadId) === checkpointThread) return;
    const storage = await this.storage;
    await storage?.checkpointer?.prune?.(checkpointThread);
  }

  async close(): Promise<void> {
    await this.cancelAll("client closed");
    this.idleSweepers = 0;
    this.stopHeartbeat();
    await this.beating;
    await this.pruner.idle();
    openClients.get(this.kernel)?.delete(this);
    this.agents.clear();
    const storage = await this.storage?.catch(() => undefined);
    // Runs still winding down (a stream nobody pulls) were aborted above: record them as cancelled now rather
    // than leave them to be swept as orphans once their lease runs out.
    for (const [runId, live] of this.live) {
      if (live.recorded) await storage?.runs.finish(runId, "cancelled", null, {}, live.fence).catch(() => undefined);
    }
    this.storage = undefined;
    await storage?.checkpointer?.close();
    await storage?.database.close();
    if (this.ownsKernel) await this.kernel.close();
  }

  /**
   * Keeps the heartbeat going while this client has no live run, so a serving instance finishes the runs of a dead
   * one (running or queued) within about a lease, whether or not anyone reads them. Opens the storage. Returns the
   * function that releases the hold; `close()` ends it anyway. The gateway holds one while it serves.
   */
  async sweepWhileIdle(): Promise<() => void> {
    await this.openStorage();
    this.idleSweepers += 1;
    this.startHeartbeat();
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.idleSweepers -= 1;
      if (this.live.size === 0 && this.idleSweepers === 0) this.stopHeartbeat();
    };
  }

  /**
   * Paused runs past their deadline get their interrupt's `on_timeout` decision: each is resumed here, in the
   * background, as if a person had answered (`run_resumed` with cause `timeout`). The claim in `resumeTurn` makes
   * sure one instance does it. A pause without `on_timeout` is cancelled instead.
   */
  private async resumeExpiredPauses(upkeep: RunStore): Promise<void> {
    for (const record of await upkeep.listExpiredPauses()) {
      if (this.timingOut.has(record.run_id)) continue;
      const decision = record.interrupt?.value.on_timeout;
      const log = this.kernel.logger.child({ run_id: record.run_id, trace_id: record.trace_id });
      if (decision === undefined) {
        await upkeep.finish(record.run_id, "cancelled");
        log.warn("a paused run expired without an on_timeout decision; cancelled");
        continue;
      }
      this.timingOut.add(record.run_id);
      log.info({ resume_by: record.resume_by }, "a paused run expired; applying its on_timeout decision");
      void (async () => {
        try {
          const events = this.resumeTurn(record.thread_id, record.run_id, decision, { userId: record.user_id, cause: "timeout" });
          for await (const _ of events) {
            // Nobody reads a timed-out run's stream here; its observers (the run event log) see it.
          }
        } catch (err) {
          if (!isAntlerError(err, RuntimeErrorCodes.RUN_NOT_PAUSED))
            log.warn({ err }, "applying a paused run's on_timeout decision failed");
        } finally {
          this.timingOut.delete(record.run_id);
        }
      })();
    }
  }

  /**
   * Executes queued runs (`enqueue`d here or by any process on the database) until the returned function is called:
   * claims as many as this client has room for (`maxActiveRuns`), oldest first and in each thread's order, and runs
   * each like a taken-over run but as its first start (attempt 1, under its recorded trace id), its events going to
   * this client's observers. Woken at once by runs queued or ended in this client, otherwise every `pollMs`
   * (default `DEFAULT_QUEUE_POLL_MS`). Keeps the heartbeat going (leases, takeovers) while it executes.
   */
  async executeQueued(options: { pollMs?: number } = {}): Promise<() => Promise<void>> {
    if (this.queue) {
      throw new AntlerError(RuntimeErrorCodes.STATE_CONFLICT, "this client already executes queued runs", {
        hint: "Call executeQueued() once per client; stop it with the function it returned before calling it again.",
      });
    }
    const { runs, maxActiveRuns, database } = await this.openStorage();
    const release = await this.sweepWhileIdle();
    const queue = new QueueExecutor(
      {
        room: () => (this.handingOver ? 0 : maxActiveRuns - this.admittedRuns),
        claim: (limit) => runs.claimQueued({ id: this.instanceId, leaseMs: this.leases.leaseMs }, limit),
        start: (record) => this.startQueued(record),
        logger: this.kernel.logger,
      },
      options.pollMs,
    );
    this.queue = queue;
    // On PostgreSQL, a run queued by another process wakes this executor at once (NOTIFY from `enqueue`).
    const notifications = database.dialect === "postgres" ? this.kernel.scope.tryResolve(QUEUE_NOTIFICATIONS_TOKEN) : undefined;
    const unlisten = await notifications
      ?.listen(queueChannel(this.kernel.config.storage.postgres_schema), () => queue.wake())
      .catch((err: unknown) => {
        this.kernel.logger.warn({ err }, "could not LISTEN for queued runs; this executor polls for them");
        return undefined;
      });
    return async () => {
      if (this.queue === queue) this.queue = undefined;
      await unlisten?.();
      await queue.stop();
      release();
    };
  }

  /** A claimed queued run, started in the background; it holds a slot (and its lease is renewed) from here on. */
  private startQueued(record: RunRecord): void {
    this.takingOver.add(record.run_id);
    this.admittedRuns += 1;
    const claim = { runId: record.run_id, userId: record.user_id, attempt: 1, leaseExpiredAt: record.created_at, queued: true };
    void this.continueTakenOver(null, claim, record).finally(() => {
      this.admittedRuns -= 1;
      this.takingOver.delete(record.run_id);
    });
  }

  /**
   * Takes over running runs whose instance stopped (their lease expired), as many as this client has room for, and
   * continues each in the background from its last checkpoint under the same run and trace id. Runs past
   * `maxAttempts` end as errors instead.
   */
  private async takeOverOrphans(upkeep: RunStore, maxActiveRuns: number): Promise<void> {
    const room = Math.min(TAKEOVER_BATCH, maxActiveRuns - this.admittedRuns);
    const round = await upkeep.takeOver(
      { id: this.instanceId, leaseMs: this.leases.leaseMs },
      { maxAttempts: this.maxAttempts, limit: room },
    );
    const log = this.kernel.logger;
    for (const runId of round.exhausted) {
      log.error({ run_id: runId, max_attempts: this.maxAttempts }, "a run stopped its process max_attempts times; ended as an error");
    }
    for (const claim of round.claimed) {
      if (this.takingOver.has(claim.runId)) continue;
      this.takingOver.add(claim.runId);
      this.admittedRuns += 1;
      for (const observer of this.observers) {
        try {
          observer.runTakenOver?.({ runId: claim.runId, attempt: claim.attempt, leaseExpiredAt: claim.leaseExpiredAt });
        } catch (err) {
          log.warn({ err, run_id: claim.runId }, "a run observer failed at runTakenOver");
        }
      }
      if (runQueueChannel.hasSubscribers) {
        const event: RunQueueEvent = { type: "taken_over", run_id: claim.runId, attempt: claim.attempt };
        runQueueChannel.publish(event);
      }
      void this.continueTakenOver(upkeep, claim).finally(() => {
        this.admittedRuns -= 1;
        this.takingOver.delete(claim.runId);
      });
    }
  }

  private async continueTakenOver(
    store: RunStore | null,
    claim: { runId: string; userId: string; attempt: number; leaseExpiredAt: string; queued?: boolean },
    claimed?: RunRecord,
  ): Promise<void> {
    const log = this.kernel.logger.child({ run_id: claim.runId, attempt: claim.attempt });
    let started = false;
    const upkeep = store ?? (await this.openStorage()).runs;
    try {
      // A queued run's claim returned its record; a takeover's is read here.
      const record = claimed ?? (await upkeep.get(claim.userId, claim.runId, { sweep: false }));
      if (!record) return;
      if (claim.queued) log.debug({ trace_id: record.trace_id }, "executing a queued run");
      else log.warn({ trace_id: record.trace_id }, "took over a run whose process stopped; continuing it from its last checkpoint");
      for await (const _ of this.takeoverTurn(record, claim, () => {
        started = true;
      })) {
        // Nobody reads a taken-over run's stream here; its observers (the run event log) carry it to followers.
      }
    } catch (err) {
      log.warn({ err }, claim.queued ? "a queued run ended with an error" : "a taken-over run ended with an error");
      // Failed before it ran (its agent could not be built): end it here rather than leave it to expire again.
      if (!started) {
        const error = err instanceof Error ? err.message : String(err);
        await upkeep.finish(claim.runId, "error", error, {}, { ownerId: this.instanceId, attempt: claim.attempt }).catch(() => undefined);
      }
    }
  }

  /**
   * A taken-over run's turn: its recorded context and agent, from the thread's last checkpoint (or its input). With
   * `queued`, a queued run's first start instead: its recorded input, attempt 1, no `run_resumed`.
   */
  private async *takeoverTurn(
    record: RunRecord,
    claim: { attempt: number; leaseExpiredAt: string; queued?: boolean },
    onStart: () => void,
  ): AsyncGenerator<StreamEvent, void, undefined> {
    const { user_id: userId, thread_id: threadId, run_id: runId } = record;
    const { saver, runs } = await this.openStorage();
    // The input and context as given (the record's kwargs are redacted: "my password is …" must reach the model as
    // written); a row from before runs/007 has only the redacted copy.
    const given = (await runs.startInput(runId)) ?? {
      input: record.kwargs.input,
      context: (record.kwargs.context as Record<string, unknown> | undefined) ?? {},
    };
    // The context as given, with the server's own keys restated from the record itself.
    const context: Record<string, unknown> = {
      ...given.context,
      thread_id: threadId,
      user_id: userId,
      model_name: record.model,
      [TRACE_METADATA_KEY]: record.trace_id,
    };
    const agentName = typeof context.agent_name === "string" ? context.agent_name : undefined;
    const custom =
      agentName === undefined || context.is_bootstrap === true
        ? undefined
        : await requireCustomAgent(this.kernel, { userId, name: agentName });
    const thinking = context.thinking_enabled === true;
    // Only a takeover reads the checkpoint (through the agent's graph); `execute` builds the agent for the run itself.
    const graphState = async () => {
      const agent = await requestTraceContext(record.trace_id, () =>
        this.agentFor({ userId, modelName: record.model, thinking, context, saver, custom }),
      );
      return agent.graph.getState(config);
    };
    const config = { configurable: { thread_id: checkpointThreadId(userId, threadId), checkpoint_ns: "" } };
    let seen: TakeoverState | undefined;
    const { input, inputMessageId } = claim.queued
      ? queuedInput(record, given.input)
      : await takeoverInput(
          async () => {
            seen = (await graphState()) as TakeoverState;
            return seen;
          },
          { input: given.input, inputMessageId: record.kwargs.input_message_id },
        );
    if (!claim.queued)
      this.kernel.logger.debug(
        {
          run_id: runId,
          from: input === null ? "checkpoint" : "recorded input",
          messages: seen?.values?.messages?.length ?? 0,
          next: seen?.next ?? [],
        },
        "where a taken-over run continues",
      );
    const callerMetadata: Record<string, unknown> = {};
    for (const [key, value] of Object.entries((record.kwargs.metadata as Record<string, unknown> | undefined) ?? {})) {
      if (!TRACE_KEYS.has(key)) callerMetadata[key] = value;
    }
    yield* this.execute({
      userId,
      threadId,
      modelName: record.model,
      thinking,
      traceId: record.trace_id,
      runId,
      signal: undefined,
      input,
      inputMessageId,
      onAdmitted: undefined,
      ...(claim.queued ? { queued: true } : { resumed: { cause: "takeover" as const, by: null } }),
      attempt: claim.attempt,
      waitingSince: Date.parse(claim.leaseExpiredAt),
      record: async ({ admitted }) => {
        admitted("running");
        onStart();
        return { context, callerMetadata, custom };
      },
    });
  }

  /** The journal's note before a non-idempotent tool call of a live run runs (see `toolJournalMiddleware`). */
  private async startToolCall(runId: string, call: { id: string; name: string }): Promise<ToolCallStart> {
    const live = this.live.get(runId);
    if (!live?.fence) return "untracked";
    const { database } = await this.openStorage();
    const outcome = await startToolCall(database.db as never, {
      runId,
      toolCallId: call.id,
      tool: call.name,
      fence: live.fence,
      now: new Date(),
    });
    if (outcome === "fenced") {
      const error = takenOverError(runId);
      live.abort(error);
      throw error;
    }
    if (outcome === "interrupted") {
      this.kernel.logger.warn(
        { run_id: runId, tool: call.name, tool_call_id: call.id },
        "a tool call that was in flight when the run's process stopped is not retried (the tool is not idempotent)",
      );
    }
    return outcome;
  }

  /** Throws (and stops the run) when a checkpoint write is for a run this client no longer holds. */
  private async checkFence(database: AntlerDatabase, thread: unknown): Promise<void> {
    if (typeof thread !== "string") return;
    for (const [runId, live] of this.live) {
      if (!live.fence || checkpointThreadId(live.userId, live.threadId) !== thread) continue;
      if (await fenceHolds(database.db as never, runId, live.fence)) return;
      const error = takenOverError(runId);
      live.abort(error);
      throw error;
    }
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      // A slow database must not stack rounds; the next tick tries again.
      this.beating ??= this.beat().finally(() => {
        this.beating = undefined;
      });
    }, this.leases.heartbeatMs);
    // Background upkeep only: it never keeps the process alive.
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /**
   * One heartbeat round: renew the leases of this client's recorded live runs, abort those another instance
   * asked to cancel (they end "cancelled" through the normal path) or that are no longer running in the record,
   * and finish any other instance's runs whose lease has expired.
   */
  private async beat(): Promise<void> {
    const storage = await this.storage?.catch(() => undefined);
    if (!storage) return;
    // Runs taken over here are this client's from the claim on, before their continuation has registered them live.
    const ids = [...new Set([...[...this.live].filter(([, live]) => live.recorded).map(([id]) => id), ...this.takingOver])];
    const log = this.kernel.logger;
    try {
      const { cancelRequested, ended } = await storage.upkeep.renewLeases(this.instanceId, ids, this.leases.leaseMs);
      // Only runs still live and recorded: one that is finishing on its own may have ended since the round began.
      const held = (runId: string) => (this.live.get(runId)?.recorded ? this.live.get(runId) : undefined);
      for (const runId of cancelRequested) held(runId)?.abort("cancelled by request (sent to another instance)");
      for (const { run_id, status } of ended) {
        const live = held(run_id);
        if (!live) continue;
        // Swept while this process was too slow to renew (a long pause), or its thread was deleted elsewhere:
        // nothing the run does now would be recorded.
        log.warn({ run_id, status, instance_id: this.instanceId }, "a live run is no longer running in its record; stopping it");
        live.abort(`the run record ended elsewhere (${status})`);
      }
      // A client handing its runs over takes on no new work (it would take back what it just handed over).
      if (this.handingOver) return;
      await this.resumeExpiredPauses(storage.upkeep);
      await this.takeOverOrphans(storage.upkeep, storage.maxActiveRuns);
      const swept = await storage.upkeep.sweepExpired();
      if (swept.length > 0) {
        log.warn({ run_ids: swept, instance_id: this.instanceId }, "finished queued runs whose process stopped renewing their lease");
      }
    } catch (err) {
      log.warn({ err, instance_id: this.instanceId }, "run lease heartbeat failed; retrying at the next beat");
    }
  }
}

function resolveLeaseTimings(input: AntlerClientOptions["runLeases"] = {}): { heartbeatMs: number; leaseMs: number; cancelWaitMs: number } {
  const heartbeatMs = input.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const leaseMs = input.leaseMs ?? heartbeatMs * 3;
  const cancelWaitMs = input.cancelWaitMs ?? heartbeatMs + 2000;
  for (const [key, value] of Object.entries({ heartbeatMs, leaseMs, cancelWaitMs })) {
    if (!Number.isFinite(value) || value <= 0) {
      throw new AntlerError(ErrorCodes.CONFIG_INVALID, `runLeases.${key} must be a positive number of milliseconds, got ${value}`, {
        where: `runLeases.${key}`,
        hint: "Leave it out for the default.",
      });
    }
  }
  if (leaseMs <= heartbeatMs) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `runLeases.leaseMs (${leaseMs}) must be longer than heartbeatMs (${heartbeatMs})`, {
      where: "runLeases.leaseMs",
      hint: "Use about three heartbeats, so one late beat does not make a live run look orphaned.",
    });
  }
  return { heartbeatMs, leaseMs, cancelWaitMs };
}

function checkMaxAttempts(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(value) || value < 1) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `maxAttempts must be a whole number of at least 1, got ${value}`, {
      where: "maxAttempts",
      hint: "runs.max_attempts: 3 lets another instance take a run over twice after its process stopped; 1 never does.",
    });
  }
  return value;
}

function checkMaxActiveRuns(value: number | undefined): number | undefined {
  if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `maxActiveRuns must be a whole number of runs, at least 1, got ${value}`, {
      where: "maxActiveRuns",
      hint: "Leave it out for the default (derived from storage.postgres.pool.max on PostgreSQL, no limit otherwise).",
    });
  }
  return value;
}

function atCapacity(limit: number): AntlerError {
  return new AntlerError(
    RuntimeErrorCodes.RUNS_AT_CAPACITY,
    `this instance already runs its most runs at once (${limit}); the run was not started`,
    {
      hint: `Retry in ${CAPACITY_RETRY_AFTER_SECONDS} s or later (or on another instance). To allow more, raise maxActiveRuns (the gateway's runs.max_active) together with storage.postgres.pool.max.`,
      details: { max_active_runs: limit, retry_after_seconds: CAPACITY_RETRY_AFTER_SECONDS },
    },
  );
}

function checkpointNotFound(threadId: string, checkpointId: string): AntlerError {
  return new AntlerError(
    RuntimeErrorCodes.CHECKPOINT_NOT_FOUND,
    `thread ${JSON.stringify(threadId)} has no checkpoint ${JSON.stringify(checkpointId)}`,
    {
      hint: "List the thread's checkpoints (its history) for their ids; storage.checkpoint.keep decides which are kept.",
    },
  );
}

function requireRun(record: RunRecord | null, threadId: string, runId: string): RunRecord {
  if (!record || record.thread_id !== threadId) {
    throw new AntlerError(RuntimeErrorCodes.RUN_NOT_FOUND, `run ${JSON.stringify(runId)} not found in thread ${JSON.stringify(threadId)}`, {
      hint: "List the thread's runs (GET /api/threads/{id}/runs) to see their ids.",
    });
  }
  return record;
}

function alreadyEnded(runId: string, status: RunStatus): AntlerError {
  return new AntlerError(RuntimeErrorCodes.STATE_CONFLICT, `run ${runId} already ended with status ${status}`, {
    hint: "Only running runs can be cancelled.",
    details: { status },
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise.then(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export function checkpointThreadId(userId: string, threadId: string): string {
  return `${userId}/${threadId}`;
}

/** Reads a run's events to its `end`: the result, paused or not. */
async function collectResult(events: AsyncGenerator<StreamEvent, void, undefined>): Promise<RunResult> {
  let values: ValuesEvent["data"] | undefined;
  let interrupt: Record<string, unknown> | undefined;
  for await (const event of events) {
    if (event.type === "values") values = event.data;
    if (event.type === "custom" && event.data.type === RUN_PAUSED_EVENT) interrupt = event.data.interrupt as Record<string, unknown>;
    if (event.type === "end") {
      const finalValues = values ?? { title: null, messages: [], artifacts: [], summary_text: null, todos: null, stop_reason: null };
      return {
        run_id: event.data.run_id,
        thread_id: event.data.thread_id,
        trace_id: event.data.trace_id,
        status: interrupt ? "paused" : "success",
        ...(interrupt ? { interrupt } : {}),
        output: lastAiText(finalValues.messages, ""),
        values: finalValues,
        usage: event.data.usage,
      };
    }
  }
  // stream() always ends with `end` or throws; reaching here means the consumer contract broke.
  throw new AntlerError(RuntimeErrorCodes.STATE_CONFLICT, "the run ended without an end event");
}

/** LangGraph's interrupt as a paused run keeps it. */
function toPausedInterrupt(raw: unknown): PausedInterrupt {
  const { id, value } = (raw ?? {}) as { id?: unknown; value?: unknown };
  const body = value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  return { id: typeof id === "string" ? id : "", value: body };
}

function notPaused(runId: string, status: RunStatus, why?: string): AntlerError {
  return new AntlerError(RuntimeErrorCodes.RUN_NOT_PAUSED, `run ${runId} is not paused (it is ${status})${why ? `: ${why}` : ""}`, {
    hint: "Only a paused run (status paused, waiting for an approval) can be resumed; read it with GET /api/threads/{id}/runs/{run}.",
    details: { status },
  });
}

function lastAiText(messages: readonly SerializedMessage[], fallback: string): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.type === "ai") return m.content;
  }
  return fallback;
}

/** What the stream of a run handed over at shutdown throws: it goes on elsewhere, under the same ids. */
function handedOverError(runId: string, threadId: string, traceId: string): AntlerError {
  return new AntlerError(
    RuntimeErrorCodes.RUN_HANDED_OVER,
    `run ${runId} stopped here because this instance is shutting down; another instance continues it from its last checkpoint`,
    {
      hint: `Join it again (GET /api/threads/${threadId}/runs/${runId}/stream with Last-Event-ID, or joinRun) to read on; its events continue where they stopped.`,
      details: { runId, threadId, traceId },
    },
  );
}

/** A queued run's graph input: the message as given, under the id recorded with it. */
function queuedInput(record: RunRecord, given: unknown): { input: unknown; inputMessageId: string | undefined } {
  const inputMessageId = typeof record.kwargs.input_message_id === "string" ? record.kwargs.input_message_id : randomUUID();
  const text = typeof given === "string" ? given : "";
  return { input: { messages: [new HumanMessage({ content: text, id: inputMessageId })] }, inputMessageId };
}
