import {
  type AntlerDatabase,
  assertSafeId,
  type Kernel,
  type Logger,
  requestTraceContext,
  resolveTraceId,
  runMigrations,
} from "@antler/kernel";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { MemoryConfig } from "./config.js";
import { MemoryErrorCodes, memoryError } from "./errors.js";
import {
  EXTRACTION_INSTRUCTIONS,
  type ExtractionReply,
  extractionPrompt,
  MalformedExtractionReply,
  parseExtractionReply,
  type TranscriptMessage,
} from "./extraction.js";
import { INDEX_MAX_FACTS, type ScopeSnapshot, ScopeSnapshotCache } from "./fact-index.js";
import { EMPTY_HISTORY, EMPTY_PROFILE, type MemoryHistory, type MemoryProfile, newFactId } from "./records.js";
import { redactMemoryText } from "./redact.js";
import {
  factCreateSchema,
  factUpdateSchema,
  MEMORY_EXPORT_VERSION,
  type MemoryConfigResponse,
  type MemoryExport,
  type MemoryResponse,
  type MemoryStatusResponse,
  memoryExportSchema,
} from "./schemas.js";
import type { MemoryFact, MemoryProfilesTable, MemoryScope, MemoryStore, SearchHit } from "./store.js";

const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Validates and normalises who a memory belongs to. An empty or missing agent name is the user's default memory. */
export function memoryScope(userId: string, agentName?: string | null): MemoryScope {
  assertSafeId("user", userId);
  const agent = agentName ?? "";
  if (agent !== "" && (!AGENT_NAME.test(agent) || agent.includes(".."))) {
    throw memoryError(MemoryErrorCodes.INVALID, `agent name ${JSON.stringify(agent)} is not valid`, {
      where: "agent",
      hint: "Use 1–128 letters, digits, '.', '_' and '-', starting with a letter or digit (the custom agent's name), or omit it for the default memory.",
    });
  }
  return { userId, agentName: agent };
}

function redactedFields<T extends object>(fields: T): T {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) if (typeof v === "string") out[k] = redactMemoryText(v);
  return out as T;
}

/** What one debounced extraction waits for. */
interface PendingExtraction {
  scope: MemoryScope;
  threadId: string;
  transcript: TranscriptMessage[];
  /** The queuing turn's trace id, or a fresh one when queued outside a trace: the extraction's logs always carry one. */
  traceId: string;
  /** When the debounce ends (ms since the epoch); a later turn moves it. */
  due: number;
  timer: NodeJS.Timeout;
}

export interface ExtractionOutcome {
  added: number;
  updated: number;
  removed: number;
  /** Set when the model's reply was refused; nothing was written. */
  malformed?: string;
}

export interface MemoryServiceOptions {
  kernel: Kernel;
  config: MemoryConfig;
  logger: Logger;
  /** Use this database instead of opening the kernel's (tests, benchmarks). The service does not close it. */
  database?: AntlerDatabase;
}

// Per-thread cursors (the last message already extracted) are kept for this many threads; a thread that falls
// out is re-read in full next time, which costs tokens but loses nothing (duplicates are not stored twice).
const MAX_CURSORS = 10_000;

/**
 * Long-term memory: the store, the debounced extraction queue and the injected context. One per kernel
 * (`MEMORY`); the middleware, the tools, the CLI, the gateway routes and `MemoryClient` all call it.
 */
export class MemoryService {
  readonly config: MemoryConfig;
  private readonly kernel: Kernel;
  private readonly logger: Logger;
  private readonly givenDatabase: AntlerDatabase | undefined;
  private opened: Promise<{ database: AntlerDatabase; store: MemoryStore }> | undefined;
  /** The store once opened, for the per-turn lookup's path. */
  private openStore: MemoryStore | undefined;
  private model: Promise<BaseChatModel> | undefined;
  private readonly pending = new Map<string, PendingExtraction>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly cursors = new Map<string, string>();
  private readonly snapshots = new ScopeSnapshotCache();
  /** The profile part of the injected block, per snapshot (it changes only with the snapshot). */
  private readonly heads = new WeakMap<ScopeSnapshot, ContextHead>();
  private closed = false;
  /** Extractions started (model calls made) by this service, for status and tests. */
  extractionCount = 0;

  constructor(options: MemoryServiceOptions) {
    this.kernel = options.kernel;
    this.config = options.config;
    this.logger = options.logger;
    this.givenDatabase = options.database;
  }

  /** The store on the kernel's database, with memory's migrations applied (opened once, on first use). */
  store(): Promise<MemoryStore> {
    this.opened ??= (async () => {
      const database = this.givenDatabase ?? (await this.kernel.openDatabase());
      // The database code (kysely) loads with the store, not with the plugin entry that builds this service.
      const { MemoryStore, memoryMigrations } = await import("./store.js");
      await runMigrations(database, memoryMigrations(database.dialect));
      const store = new MemoryStore(database);
      if (!this.closed) this.openStore = store;
      return { database, store };
    })();
    this.opened.catch(() => {
      this.opened = undefined;
    });
    return this.opened.then((o) => o.store);
  }

  // ------------------------------------------------------------------ reading

  async get(scope: MemoryScope): Promise<MemoryResponse> {
    const store = await this.store();
    const [profile, facts] = await Promise.all([store.profile(scope), store.listFacts(scope)]);
    return {
      user_id: scope.userId,
      agent_name: scope.agentName || null,
      profile: profileOf(profile),
      history: historyOf(profile),
      facts,
      updated_at: latest(profile?.updated_at, facts[0]?.updated_at),
    };
  }

  async listFacts(scope: MemoryScope, options: { limit?: number; category?: string } = {}): Promise<MemoryFact[]> {
    return (await this.store()).listFacts(scope, options);
  }

  async getFact(scope: MemoryScope, id: string): Promise<MemoryFact> {
    const found = await (await this.store()).getFact(scope, id);
    if (!found) throw notFound(id);
    return found;
  }

  /**
   * The scope's profile and an in-memory index of its facts, as of the scope's current version (which the
   * database's triggers bump on every write to its facts or profile, from any instance). Costs one primary-key
   * read while nothing changed; rebuilt, re-stemming only changed facts, when something did. With `recheckMs`,
   * the version read is skipped when the last one began less than that long ago and this process has written no
   * memory since: other instances' writes then show within `recheckMs`, this process's at once.
   */
  private snapshot(scope: MemoryScope, recheckMs = 0): ScopeSnapshot | Promise<ScopeSnapshot> {
    const store = this.openStore;
    return store ? this.snapshotOn(store, scope, recheckMs) : this.store().then((opened) => this.snapshotOn(opened, scope, recheckMs));
  }

  private snapshotOn(store: MemoryStore, scope: MemoryScope, recheckMs: number): ScopeSnapshot | Promise<ScopeSnapshot> {
    const key = `${scope.userId}\0${scope.agentName}`;
    const checked = { at: Date.now(), writes: store.localWrites };
    const recent = recheckMs > 0 ? this.snapshots.recent(key, checked.writes, recheckMs, checked.at) : undefined;
    if (recent) return recent;
    return store.version(scope).then((version) =>
      this.snapshots.get(key, version, checked, async () => {
        const [facts, profile] = await Promise.all([store.listFacts(scope, { limit: INDEX_MAX_FACTS + 1 }), store.profile(scope)]);
        return { facts, profile };
      }),
    );
  }

  /**
   * The scope's facts most relevant to `query`, best first (BM25 over stemmed words). Scopes above
   * INDEX_MAX_FACTS use the database's full-text index instead.
   */
  async search(scope: MemoryScope, query: string, options: { limit?: number; category?: string | undefined } = {}): Promise<SearchHit[]> {
    return this.searchIn(await this.snapshot(scope), scope, query, options);
  }

  private async searchIn(
    { index }: ScopeSnapshot,
    scope: MemoryScope,
    query: string,
    options: { limit?: number; category?: string | undefined },
  ): Promise<SearchHit[]> {
    const search = { limit: options.limit ?? 10, category: options.category };
    return index ? index.search(query, search) : (await this.store()).search(scope, query, search);
  }

  async export(scope: MemoryScope): Promise<MemoryExport> {
    const memory = await this.get(scope);
    return {
      version: MEMORY_EXPORT_VERSION,
      exported_at: new Date().toISOString(),
      user_id: memory.user_id,
      agent_name: memory.agent_name,
      profile: memory.profile,
      history: memory.history,
      facts: memory.facts.map((f) => ({ ...f, category: f.category as MemoryExport["facts"][number]["category"] })),
    };
  }

  configView(): MemoryConfigResponse {
    const c = this.config;
    const storage = this.kernel.config.storage.backend === "postgres" ? "postgres" : "sqlite";
    return {
      enabled: c.enabled,
      mode: c.mode,
      model: c.model ?? null,
      debounce_ms: c.debounce_ms,
      injection_enabled: c.injection_enabled,
      injection_recheck_ms: c.injection_recheck_ms,
      max_injection_tokens: c.max_injection_tokens,
      max_injected_facts: c.max_injected_facts,
      max_facts: c.max_facts,
      fact_confidence_threshold: c.fact_confidence_threshold,
      max_extraction_messages: c.max_extraction_messages,
      storage,
      retrieval: storage === "postgres" ? "tsvector" : "fts5",
    };
  }

  async status(scope: MemoryScope): Promise<MemoryStatusResponse> {
    const store = await this.store();
    const [count, profile] = await Promise.all([store.countFacts(scope), store.profile(scope)]);
    const mine = (key: string) => key.startsWith(`${scope.userId}\0${scope.agentName}\0`);
    return {
      enabled: this.config.enabled,
      mode: this.config.mode,
      user_id: scope.userId,
      agent_name: scope.agentName || null,
      fact_count: count,
      last_extraction_at: profile?.last_extraction_at ?? null,
      pending_extractions: [...this.pending.keys()].filter(mine).length,
      running_extractions: [...this.running.keys()].filter(mine).length,
    };
  }

  // ------------------------------------------------------------------ writing (all content is redacted first)

  async createFact(scope: MemoryScope, input: unknown, source = "manual"): Promise<MemoryFact> {
    const parsed = parseInput(factCreateSchema, input);
    const store = await this.store();
    return store.transaction(async (tx) => {
      const [created] = await store.insertFacts(
        scope,
        [{ content: redactMemoryText(parsed.content), category: parsed.category, confidence: parsed.confidence, source }],
        tx,
      );
      if (source !== "manual") await store.evictBeyond(scope, this.config.max_facts, tx);
      return created as MemoryFact;
    });
  }

  async updateFact(scope: MemoryScope, id: string, patch: unknown): Promise<MemoryFact> {
    const parsed = parseInput(factUpdateSchema, patch);
    const updated = await (await this.store()).updateFact(scope, id, {
      ...parsed,
      ...(parsed.content !== undefined ? { content: redactMemoryText(parsed.content) } : {}),
    });
    if (!updated) throw notFound(id);
    return updated;
  }

  async deleteFact(scope: MemoryScope, id: string): Promise<{ id: string; deleted: true }> {
    if ((await (await this.store()).deleteFacts(scope, [id])) === 0) throw notFound(id);
    return { id, deleted: true };
  }

  async clear(scope: MemoryScope): Promise<MemoryResponse> {
    const store = await this.store();
    await store.transaction((tx) => store.clear(scope, tx));
    this.dropQueued(scope);
    return this.get(scope);
  }

  /**
   * Loads an export into `scope` (its `user_id`/`agent_name` are informational: an export moves between users).
   * `merge` keeps what is there and adds the file's facts (a fact whose id exists is updated); `replace` clears
   * first. Validated as a whole before anything is written, and written in one transaction.
   */
  async import(scope: MemoryScope, data: unknown, options: { mode?: "merge" | "replace" } = {}): Promise<MemoryResponse> {
    const parsed = parseInput(memoryExportSchema, data, "the import file");
    const store = await this.store();
    const mode = options.mode ?? "merge";
    await store.transaction(async (tx) => {
      if (mode === "replace") await store.clear(scope, tx);
      const existing = new Set((await store.listFacts(scope, {}, tx)).map((f) => f.id));
      const fresh = parsed.facts.filter((f) => !existing.has(f.id));
      for (const f of parsed.facts.filter((f) => existing.has(f.id))) {
        await store.updateFact(scope, f.id, { content: redactMemoryText(f.content), category: f.category, confidence: f.confidence }, tx);
      }
      // Ids are unique across users: a fact id that another user's memory holds gets a new one here.
      const taken = new Set(
        fresh.length
          ? (
              await tx
                .selectFrom("memory_facts")
                .select("id")
                .where(
                  "id",
                  "in",
                  fresh.map((f) => f.id),
                )
                .execute()
            ).map((r) => r.id)
          : [],
      );
      await store.insertFacts(
        scope,
        fresh.map((f) => ({ ...f, id: taken.has(f.id) ? newFactId() : f.id, content: redactMemoryText(f.content) })),
        tx,
      );
      const fields = { ...parsed.profile, ...parsed.history };
      if (mode === "replace" || Object.values(fields).some((v) => v !== "")) {
        const current = await store.profile(scope, tx);
        const merged = mode === "replace" ? fields : mergeNonEmpty(current, fields);
        await store.saveProfile(scope, redactedFields(merged), tx);
      }
    });
    return this.get(scope);
  }

  // ------------------------------------------------------------------ injection

  /**
   * The memory block for a turn: the profile, then the facts most relevant to `query` (one full-text lookup), cut
   * to `max_injection_tokens` (about 4 characters each). Null when there is nothing to say. The value itself when
   * the scope's snapshot is in memory and fresh enough (most turns), else a promise of it: `await` works for both.
   */
  contextBlock(scope: MemoryScope, query: string): string | null | Promise<string | null> {
    const snapshot = this.snapshot(scope, this.config.injection_recheck_ms);
    // Within injection_recheck_ms of a read, the snapshot is at hand and the block is built without waiting.
    return snapshot instanceof Promise ? snapshot.then((s) => this.blockFrom(s, scope, query)) : this.blockFrom(snapshot, scope, query);
  }

  private blockFrom(snapshot: ScopeSnapshot, scope: MemoryScope, query: string): string | null | Promise<string | null> {
    const maxChars = this.config.max_injection_tokens * 4;
    let head = this.heads.get(snapshot);
    if (!head) {
      head = contextHead(profileOf(snapshot.profile), historyOf(snapshot.profile), maxChars);
      this.heads.set(snapshot, head);
    }
    const limit = this.config.max_injected_facts;
    if (limit <= 0) return assembleContext(head, []);
    if (snapshot.index) return assembleContext(head, snapshot.index.factLines(query, limit, factLine));
    return this.store()
      .then((store) => store.search(scope, query, { limit }))
      .then((hits) => assembleContext(head, hits.map(factLine)));
  }

  // ------------------------------------------------------------------ extraction

  /**
   * Queues a thread's conversation for extraction after `debounce_ms` of quiet: a later turn on the same thread
   * replaces the queued transcript and pushes the wait back, so quick turns cost one extraction. Never waits for
   * it.
   */
  queueExtraction(scope: MemoryScope, threadId: string, transcript: TranscriptMessage[]): void {
    if (this.closed || transcript.length === 0) return;
    const key = `${scope.userId}\0${scope.agentName}\0${threadId}`;
    const due = Date.now() + this.config.debounce_ms;
    const traceId = resolveTraceId();
    const previous = this.pending.get(key);
    if (previous) {
      // The armed timer stays: when it goes off early it waits out the rest (a timer per turn would cost more).
      Object.assign(previous, { scope, threadId, transcript, traceId, due });
      return;
    }
    const job: PendingExtraction = { scope, threadId, transcript, traceId, due, timer: this.arm(key, this.config.debounce_ms) };
    this.pending.set(key, job);
  }

  private arm(key: string, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      const job = this.pending.get(key);
      if (!job) return;
      const left = job.due - Date.now();
      if (left > 0) job.timer = this.arm(key, left);
      else this.fire(key);
    }, ms);
    // Background work: it never keeps a process alive; close() flushes what is queued.
    timer.unref();
    return timer;
  }

  /** Runs every queued extraction now and waits for all running ones. */
  async flush(): Promise<void> {
    for (const key of [...this.pending.keys()]) this.fire(key);
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }

  private dropQueued(scope: MemoryScope): void {
    for (const [key, p] of this.pending) {
      if (p.scope.userId === scope.userId && p.scope.agentName === scope.agentName) {
        clearTimeout(p.timer);
        this.pending.delete(key);
      }
    }
  }

  private fire(key: string): void {
    const job = this.pending.get(key);
    if (!job) return;
    clearTimeout(job.timer);
    this.pending.delete(key);
    // One extraction per thread at a time, in order: the next waits for the previous to commit.
    const before = this.running.get(key) ?? Promise.resolve();
    const run = before
      .then(() => requestTraceContext(job.traceId, () => this.extract(key, job)))
      .then(
        () => undefined,
        (err: unknown) => {
          this.logger.error(
            { err, trace_id: job.traceId, user_id: job.scope.userId, thread_id: job.threadId },
            "memory extraction failed; the thread's new messages stay queued for its next turn",
          );
        },
      )
      .finally(() => {
        if (this.running.get(key) === run) this.running.delete(key);
      });
    this.running.set(key, run);
  }

  private extractionModel(): Promise<BaseChatModel> {
    this.model ??= this.kernel.createModel(this.config.model);
    this.model.catch(() => {
      this.model = undefined;
    });
    return this.model;
  }

  /** One extraction: the thread's messages since the last one, the model's update, validated, applied atomically. */
  private async extract(key: string, job: PendingExtraction): Promise<ExtractionOutcome> {
    const { transcript } = job;
    const cursor = this.cursors.get(key);
    const from = cursor === undefined ? -1 : transcript.findIndex((m) => m.id === cursor);
    const fresh = transcript.slice(from + 1).slice(-this.config.max_extraction_messages);
    if (fresh.length === 0 || !fresh.some((m) => m.role === "user")) return { added: 0, updated: 0, removed: 0 };
    const store = await this.store();
    const transcriptText = fresh.map((m) => m.text).join("\n");
    const [profileRow, relevant] = await Promise.all([store.profile(job.scope), this.search(job.scope, transcriptText, { limit: 50 })]);
    const prompt = extractionPrompt({ profile: profileOf(profileRow), history: historyOf(profileRow), facts: relevant, transcript: fresh });
    const model = await this.extractionModel();
    this.extractionCount++;
    // Loaded here, not at import: the plugin stays light for commands that never extract.
    const { HumanMessage, SystemMessage } = await import("@langchain/core/messages");
    // "nostream": bookkeeping, never part of a run's streamed messages.
    const reply = await model.invoke([new SystemMessage(EXTRACTION_INSTRUCTIONS), new HumanMessage(prompt)], { tags: ["nostream"] });
    let update: ExtractionReply;
    try {
      update = parseExtractionReply(reply.text);
    } catch (err) {
      if (!(err instanceof MalformedExtractionReply)) throw err;
      // The thread's cursor does not move: its messages are read again with the next turn's extraction.
      this.logger.error(
        { trace_id: job.traceId, user_id: job.scope.userId, thread_id: job.threadId, reason: err.message, reply: reply.text.slice(0, 500) },
        "memory extraction reply was malformed; memory left unchanged",
      );
      return { added: 0, updated: 0, removed: 0, malformed: err.message };
    }
    const outcome = await this.apply(job.scope, update, `thread:${job.threadId}`);
    this.setCursor(key, fresh.at(-1)?.id as string);
    this.logger.debug({ trace_id: job.traceId, user_id: job.scope.userId, thread_id: job.threadId, ...outcome }, "memory extracted");
    return outcome;
  }

  private setCursor(key: string, id: string): void {
    this.cursors.delete(key);
    if (this.cursors.size >= MAX_CURSORS) this.cursors.delete(this.cursors.keys().next().value as string);
    this.cursors.set(key, id);
  }

  /** Applies a validated extraction reply in one transaction: redacted, thresholded, de-duplicated, bounded. */
  async apply(scope: MemoryScope, update: ExtractionReply, source: string): Promise<ExtractionOutcome> {
    const store = await this.store();
    return store.transaction(async (tx) => {
      const existing = await store.listFacts(scope, {}, tx);
      const known = new Set(existing.map((f) => f.id));
      const normalized = new Set(existing.map((f) => normalizeFact(f.content)));
      const removed = await store.deleteFacts(
        scope,
        update.remove.filter((id) => known.has(id)),
        tx,
      );
      let updated = 0;
      for (const patch of update.update) {
        if (!known.has(patch.id) || update.remove.includes(patch.id)) continue;
        const { id, ...fields } = patch;
        if (fields.content !== undefined) fields.content = redactMemoryText(fields.content);
        if (await store.updateFact(scope, id, fields, tx)) updated++;
      }
      const additions = [];
      for (const add of update.add) {
        if (add.confidence < this.config.fact_confidence_threshold) continue;
        const content = redactMemoryText(add.content);
        const norm = normalizeFact(content);
        if (normalized.has(norm)) continue;
        normalized.add(norm);
        additions.push({ content, category: add.category, confidence: add.confidence, source });
      }
      await store.insertFacts(scope, additions, tx);
      await store.evictBeyond(scope, this.config.max_facts, tx);
      const fields = redactedFields({ ...update.profile, ...update.history });
      await store.saveProfile(scope, { ...fields, last_extraction_at: new Date().toISOString() }, tx);
      return { added: additions.length, updated, removed };
    });
  }

  /** Flushes queued extractions (bounded by `shutdown_flush_timeout_ms`), then releases the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const flushed = this.flush();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.config.shutdown_flush_timeout_ms);
    });
    const result = await Promise.race([flushed.then(() => "done" as const), timedOut]);
    clearTimeout(timer);
    if (result === "timeout") {
      this.logger.warn(
        { running: this.running.size, timeout_ms: this.config.shutdown_flush_timeout_ms },
        "memory extractions still running at close were given up (memory.shutdown_flush_timeout_ms)",
      );
    }
    this.snapshots.clear();
    const opened = await this.opened?.catch(() => undefined);
    this.opened = undefined;
    this.openStore = undefined;
    if (opened && !this.givenDatabase) await opened.database.close();
  }
}

function parseInput<S extends import("zod").ZodType>(schema: S, value: unknown, what = "the request"): import("zod").output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.join(".") || undefined;
  throw memoryError(MemoryErrorCodes.INVALID, `${what} is not valid: ${where ? `${where}: ` : ""}${issue?.message ?? "invalid"}`, {
    ...(where ? { where } : {}),
    hint: "Fix the field named above; nothing was written.",
  });
}

function notFound(id: string) {
  return memoryError(MemoryErrorCodes.NOT_FOUND, `no memory fact ${JSON.stringify(id)} for this user`, {
    hint: "List facts with `antler memory show` or GET /api/memory; ids are per user (and per agent).",
  });
}

function normalizeFact(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

function profileOf(row: MemoryProfilesTable | undefined): MemoryProfile {
  return row
    ? { work_context: row.work_context, personal_context: row.personal_context, top_of_mind: row.top_of_mind }
    : { ...EMPTY_PROFILE };
}

function historyOf(row: MemoryProfilesTable | undefined): MemoryHistory {
  return row
    ? { recent_months: row.recent_months, earlier_context: row.earlier_context, long_term_background: row.long_term_background }
    : { ...EMPTY_HISTORY };
}

function mergeNonEmpty(row: MemoryProfilesTable | undefined, fields: MemoryProfile & MemoryHistory): MemoryProfile & MemoryHistory {
  const current = { ...profileOf(row), ...historyOf(row) };
  const out = { ...current };
  for (const [k, v] of Object.entries(fields) as Array<[keyof typeof out, string]>) if (v !== "") out[k] = v;
  return out;
}

function latest(...stamps: Array<string | undefined>): string | null {
  const present = stamps.filter((s): s is string => typeof s === "string");
  return present.length ? (present.sort().at(-1) as string) : null;
}

const PROFILE_LABELS: Array<[keyof MemoryProfile | keyof MemoryHistory, string]> = [
  ["work_context", "Work"],
  ["personal_context", "Personal"],
  ["top_of_mind", "Top of mind"],
  ["recent_months", "Recent months"],
  ["earlier_context", "Earlier"],
  ["long_term_background", "Background"],
];

const CONTEXT_OPEN = "<memory>\nWhat you remember about this user from earlier conversations. Use it when it helps; do not recite it.\n";
const CONTEXT_CLOSE = "</memory>";
const FACTS_HEADING = "Relevant facts:";

/** The profile part of the injected block and the characters left for facts: the same for every lookup of a snapshot. */
export interface ContextHead {
  readonly lines: readonly string[];
  readonly budget: number;
}

/** Profile lines first (each cut to fit `maxChars` with the block's frame). */
export function contextHead(profile: MemoryProfile, history: MemoryHistory, maxChars: number): ContextHead {
  let budget = maxChars - CONTEXT_OPEN.length - CONTEXT_CLOSE.length;
  const lines: string[] = [];
  const all = { ...profile, ...history };
  for (const [key, label] of PROFILE_LABELS) {
    const value = all[key].trim();
    if (!value || budget <= 40) continue;
    let line = `${label}: ${value}`;
    if (line.length + 1 > budget) line = `${line.slice(0, Math.max(0, budget - 2))}…`;
    lines.push(line);
    budget -= line.length + 1;
  }
  return { lines, budget };
}

/** A fact as the injected block lists it. */
export function factLine(fact: Pick<MemoryFact, "category" | "content">): string {
  return `- [${fact.category}] ${fact.content}`;
}

/** The block from its profile part and the relevant facts' lines, best first: whole facts while they fit. */
export function assembleContext(head: ContextHead, factLines: readonly string[]): string | null {
  let budget = head.budget;
  let used = 0;
  for (const line of factLines) {
    const cost = line.length + 1 + (used === 0 ? FACTS_HEADING.length + 1 : 0);
    if (cost > budget) break;
    budget -= cost;
    used++;
  }
  const lines = used === 0 ? head.lines : [...head.lines, FACTS_HEADING, ...factLines.slice(0, used)];
  if (lines.length === 0) return null;
  return `${CONTEXT_OPEN}${lines.join("\n")}\n${CONTEXT_CLOSE}`;
}

/** The injected block, within `maxChars`: profile lines first (each cut to fit), then whole facts while they fit. */
export function formatContext(
  profile: MemoryProfile,
  history: MemoryHistory,
  facts: readonly MemoryFact[],
  maxChars: number,
): string | null {
  return assembleContext(contextHead(profile, history, maxChars), facts.map(factLine));
}
