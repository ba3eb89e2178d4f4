import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import {
  type AntlerTool,
  DEFAULT_USER_ID,
  type Logger,
  redactText,
  type ToolAssemblyContext,
  type ToolEntry,
  threadPaths,
} from "@antler/kernel";
import type { DynamicStructuredTool, ToolRunnableConfig } from "@langchain/core/tools";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { type McpPluginConfig, type McpServerConfig, type McpTaskToolConfig, readExtensionsConfig } from "./config.js";
import { errorText, type ToolContentBlock, toToolContent } from "./results.js";
import { isConnectionLoss, isTimeout, McpSession } from "./session.js";
import { type ContentSignature, SignatureCache } from "./signature.js";
import { PLUGIN_NAME } from "./version.js";

export type McpServerState = "idle" | "ready" | "failed" | "disabled";

export interface McpServerStatus {
  readonly name: string;
  readonly transport: McpServerConfig["transport"];
  /** `config` (plugin config) or `extensions_config` (the JSON file). */
  readonly origin: "config" | "extensions_config";
  readonly state: McpServerState;
  readonly toolCount: number;
  readonly tools: readonly string[];
  readonly lastError: string | null;
  /** How many sessions (for stdio: processes) were started for this server since the last reset. */
  readonly starts: number;
  readonly sessions: ReadonlyArray<{ readonly userId: string | null; readonly threadId: string | null; readonly pid: number | null }>;
}

export interface McpStatus {
  readonly extensionsConfig: { readonly path: string; readonly loads: number; readonly error: string | null } | null;
  readonly servers: readonly McpServerStatus[];
}

export interface McpToolCatalogOptions {
  config: McpPluginConfig;
  /** Folder relative `extensions_config` paths resolve against. */
  configDir: string;
  /** Antler's data folder; stdio servers run in the thread workspace below it. */
  baseDir: string;
  logger: Logger;
  pluginName?: string;
  /** Drives the tools listed under a server's `tasks:` in the background (durable MCP tasks). */
  backgroundTasks?: BackgroundTaskStarter | undefined;
}

/** Who calls a tool: the (user, thread) whose session serves it. */
export interface McpCaller {
  userId: string | null;
  threadId: string | null;
}

/** What a long tool's call hands to the durable task service; it answers with the text the model sees. */
export interface BackgroundTaskStart {
  readonly server: string;
  readonly config: McpServerConfig;
  readonly task: McpTaskToolConfig;
  /** The model-visible tool name. */
  readonly toolName: string;
  readonly args: Record<string, unknown>;
  readonly caller: McpCaller;
  readonly runContext: Record<string, unknown>;
  readonly signal?: AbortSignal | undefined;
}

export interface BackgroundTaskStarter {
  start(request: BackgroundTaskStart): Promise<string>;
}

interface ResolvedServers {
  readonly servers: Readonly<Record<string, { config: McpServerConfig; origin: McpServerStatus["origin"] }>>;
  readonly error: string | null;
}

type Listing = { ok: true; tools: AntlerTool[]; names: string[] } | { ok: false; error: string };

type Caller = McpCaller;

const NO_ID = "\u0000";

interface SessionEntry {
  readonly server: string;
  readonly caller: Caller;
  readonly session: Promise<McpSession>;
  readonly stdio: boolean;
  opened?: McpSession;
  /** Calls (and listings) using it right now: a busy session is never reaped. */
  busy: number;
  lastUsed: number;
}

/** Model providers accept tool names of 1–64 characters from [a-zA-Z0-9_-]. */
export function mcpToolName(server: string, tool: string, prefix: boolean): string {
  const raw = prefix ? `${server}_${tool}` : tool;
  const clean = raw.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
  return clean || "mcp_tool";
}

function text(value: unknown): string | null {
  return typeof value === "string" && value.length > 0 ? value : null;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The MCP servers of one kernel: which are configured, their listed tools (cached until the config changes
 * or `reset()`), and the live sessions that serve tool calls.
 */
export class McpToolCatalog {
  private readonly pluginName: string;
  private readonly fileCache: SignatureCache<ResolvedServers>;
  private lastResolved: ResolvedServers | undefined;
  private readonly listings = new Map<string, Promise<Listing>>();
  private readonly settled = new Map<string, Listing>();
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly starts = new Map<string, number>();
  private readonly lastErrors = new Map<string, string>();
  private reaper: NodeJS.Timeout | undefined;
  /** The reset marker as this catalog last saw it (see `requestReset`). */
  private resetSeen: string;
  private closed = false;

  constructor(private readonly options: McpToolCatalogOptions) {
    this.pluginName = options.pluginName ?? PLUGIN_NAME;
    this.fileCache = new SignatureCache((path, signature) => this.loadFile(path, signature));
    this.resetSeen = this.resetMarker();
  }

  /** Where `antler mcp reset` leaves its mark for every process on the same data folder. */
  get resetMarkerPath(): string {
    return join(this.options.baseDir, "mcp", "reset");
  }

  /** The marker's content (each reset writes a fresh random id), or "none". One small read per assembly. */
  private resetMarker(): string {
    try {
      return readFileSync(this.resetMarkerPath, "utf8");
    } catch {
      return "none";
    }
  }

  /**
   * Resets this catalog and asks every other process that shares the data folder (a running `antler serve`, the
   * workers) to do the same: they notice the marker at their next tool assembly.
   */
  async requestReset(): Promise<void> {
    await mkdir(dirname(this.resetMarkerPath), { recursive: true });
    await writeFile(this.resetMarkerPath, `${new Date().toISOString()} pid ${process.pid} ${randomUUID()}\n`);
    this.resetSeen = this.resetMarker();
    await this.reset();
  }

  /** Absolute path of the extensions config, or `null` when none is configured. */
  get extensionsConfigPath(): string | null {
    const p = this.options.config.extensions_config;
    return p ? resolve(this.options.configDir, p) : null;
  }

  private loadFile(path: string, signature: ContentSignature | null): ResolvedServers {
    if (signature === null) {
      return { servers: {}, error: `extensions config ${path} does not exist` };
    }
    try {
      const servers = readExtensionsConfig(signature.path);
      const out: ResolvedServers["servers"] = Object.fromEntries(
        Object.entries(servers).map(([name, config]) => [name, { config, origin: "extensions_config" as const }]),
      );
      return { servers: out, error: null };
    } catch (err) {
      this.options.logger.warn({ err, path }, "MCP extensions config is unusable; its servers are skipped");
      return { servers: {}, error: message(err) };
    }
  }

  /** Current servers: the extensions file (re-read only when its signature changes) overlaid by `servers`. */
  private resolveServers(): ResolvedServers {
    const path = this.extensionsConfigPath;
    const file = path ? this.fileCache.get(path) : { servers: {}, error: null };
    const own = Object.fromEntries(
      Object.entries(this.options.config.servers).map(([name, config]) => [name, { config, origin: "config" as const }]),
    );
    const merged: ResolvedServers = { servers: { ...file.servers, ...own }, error: file.error };
    const previous = this.lastResolved;
    if (previous === undefined || JSON.stringify(previous.servers) !== JSON.stringify(merged.servers)) {
      this.invalidate(previous, merged);
      this.lastResolved = merged;
    } else if (previous.error !== merged.error) {
      this.lastResolved = merged;
    }
    return this.lastResolved ?? merged;
  }

  /** Drops every listing, and the sessions of servers whose config changed or that were removed. */
  private invalidate(previous: ResolvedServers | undefined, next: ResolvedServers): void {
    this.listings.clear();
    this.settled.clear();
    if (!previous) return;
    for (const [name, entry] of Object.entries(previous.servers)) {
      const now = next.servers[name];
      if (!now || JSON.stringify(now.config) !== JSON.stringify(entry.config)) void this.closeServerSessions(name);
    }
  }

  /** The `assembleTools` contribution: tools of every enabled server that listed successfully. */
  async assemble(context: ToolAssemblyContext): Promise<ToolEntry[]> {
    if (this.closed) return [];
    const marker = this.resetMarker();
    if (marker !== this.resetSeen) {
      this.resetSeen = marker;
      this.options.logger.info(
        { marker: this.resetMarkerPath },
        "MCP reset requested by another process; closing sessions and dropping cached tools",
      );
      await this.reset();
    }
    const { servers } = this.resolveServers();
    const caller: Caller = { userId: text(context.context.user_id) ?? DEFAULT_USER_ID, threadId: text(context.context.thread_id) };
    const names = Object.keys(servers).filter((name) => servers[name]?.config.enabled);
    const listings = await Promise.all(names.map((name) => this.listing(name, servers[name]?.config as McpServerConfig, caller)));
    const entries: ToolEntry[] = [];
    for (const listing of listings) {
      if (!listing.ok) continue;
      for (const tool of listing.tools) entries.push({ tool, plugin: this.pluginName, source: "mcp" });
    }
    return entries;
  }

  private listing(name: string, config: McpServerConfig, caller: Caller): Promise<Listing> {
    let pending = this.listings.get(name);
    if (!pending) {
      pending = this.list(name, config, caller);
      this.listings.set(name, pending);
      void pending.then((l) => {
        if (this.listings.get(name) === pending) this.settled.set(name, l);
      });
    }
    return pending;
  }

  private async list(name: string, config: McpServerConfig, caller: Caller): Promise<Listing> {
    try {
      const tools = await this.withSession(name, config, caller, (session) => session.listTools());
      // LangChain loads with the first listing, not with the plugin: `antler config check` builds no tool.
      const { DynamicStructuredTool: ToolClass } = await import("@langchain/core/tools");
      this.lastErrors.delete(name);
      // The status and cancel tools of durable tasks take the private job handle: only the task service calls them.
      const internal = new Set((config.tasks?.tools ?? []).flatMap((t) => [t.status_tool, ...(t.cancel_tool ? [t.cancel_tool] : [])]));
      const built = tools.filter((t) => !internal.has(t.name)).map((t) => this.buildTool(ToolClass, name, config, t));
      return { ok: true, tools: built, names: built.map((t) => t.name) };
    } catch (err) {
      const error = `MCP server ${name} is unavailable: ${redactText(message(err))}`;
      this.lastErrors.set(name, error);
      this.options.logger.warn({ server: name, err: redactText(message(err)) }, "MCP server failed to start or list tools; skipping it");
      await this.closeServerSessions(name);
      return { ok: false, error };
    }
  }

  private sessionKey(name: string, config: McpServerConfig, caller: Caller): string {
    // stdio servers see the thread's files, so each (user, thread) gets its own process; HTTP/SSE are shared.
    if (config.transport !== "stdio") return name;
    return [name, caller.userId ?? NO_ID, caller.threadId ?? NO_ID].join("\u0001");
  }

  /** Runs `use` with the (user, thread)'s session of a server, marked busy so the reaper leaves it alone. */
  private withSession<T>(name: string, config: McpServerConfig, caller: Caller, use: (s: McpSession) => Promise<T>): Promise<T> {
    const entry = this.sessionEntry(name, config, caller);
    return this.busyWhile(entry, async () => use(await entry.session));
  }

  /** Marks a session busy while `work` runs, so the idle reaper and the LRU cap leave it alone, and stamps its use. */
  private async busyWhile<T>(entry: SessionEntry, work: () => Promise<T>): Promise<T> {
    entry.busy += 1;
    try {
      return await work();
    } finally {
      entry.busy -= 1;
      entry.lastUsed = Date.now();
    }
  }

  private sessionEntry(name: string, config: McpServerConfig, caller: Caller): SessionEntry {
    const key = this.sessionKey(name, config, caller);
    const existing = this.sessions.get(key);
    if (existing) return existing;
    const stdio = config.transport === "stdio";
    if (stdio) this.makeRoomForStdio();
    this.starts.set(name, (this.starts.get(name) ?? 0) + 1);
    const opening = McpSession.open(name, config, {
      ...this.workspaceFor(config, caller),
      onUnexpectedClose: (s) => {
        const tail = s.stderrTail;
        this.lastErrors.set(name, `MCP server ${name} exited unexpectedly${tail ? ` (stderr: ${tail})` : ""}`);
        if (this.sessions.get(key)?.session === opening) this.sessions.delete(key);
      },
    });
    const entry: SessionEntry = { server: name, caller, session: opening, stdio, busy: 0, lastUsed: Date.now() };
    this.sessions.set(key, entry);
    opening.then(
      (s) => {
        entry.opened = s;
      },
      () => {
        if (this.sessions.get(key) === entry) this.sessions.delete(key);
      },
    );
    if (stdio) this.startReaper();
    return entry;
  }

  /** At the stdio cap, closes the least recently used idle stdio session (a busy one is never cut off). */
  private makeRoomForStdio(): void {
    const { max_stdio_sessions } = this.options.config.stdio_sessions;
    const stdio = [...this.sessions.entries()].filter(([, e]) => e.stdio);
    if (stdio.length < max_stdio_sessions) return;
    const idle = stdio.filter(([, e]) => e.busy === 0).sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    const victim = idle[0];
    if (!victim) {
      this.options.logger.warn(
        { max_stdio_sessions, live: stdio.length },
        "every MCP stdio session is busy at max_stdio_sessions; starting one more",
      );
      return;
    }
    this.closeEntry(victim[0], victim[1], "least recently used at max_stdio_sessions");
  }

  private startReaper(): void {
    if (this.reaper || this.closed) return;
    const idleMs = this.options.config.stdio_sessions.idle_seconds * 1000;
    this.reaper = setInterval(() => this.reapIdle(idleMs), Math.min(60_000, Math.max(50, idleMs / 4)));
    // Housekeeping only: it never keeps the process alive.
    this.reaper.unref();
  }

  /** Closes stdio sessions nobody used for `idleMs`; stops the timer when none are left. */
  reapIdle(idleMs = this.options.config.stdio_sessions.idle_seconds * 1000): void {
    const now = Date.now();
    for (const [key, entry] of this.sessions) {
      if (entry.stdio && entry.busy === 0 && now - entry.lastUsed >= idleMs) this.closeEntry(key, entry, "idle");
    }
    if (![...this.sessions.values()].some((e) => e.stdio)) {
      clearInterval(this.reaper);
      this.reaper = undefined;
    }
  }

  private closeEntry(key: string, entry: SessionEntry, why: string): void {
    if (this.sessions.get(key) === entry) this.sessions.delete(key);
    this.options.logger.debug(
      { server: entry.server, user_id: entry.caller.userId, thread_id: entry.caller.threadId, why },
      "closing MCP session",
    );
    void entry.session.then((s) => s.close()).catch(() => undefined);
  }

  private workspaceFor(config: McpServerConfig, caller: Caller): { cwd?: string; env?: Record<string, string> } {
    if (config.transport !== "stdio" || caller.threadId === null) return { cwd: this.options.configDir };
    const paths = threadPaths(this.options.baseDir, caller.userId ?? DEFAULT_USER_ID, caller.threadId);
    const tmp = join(paths.workspace, ".mcp", "tmp");
    mkdirSync(tmp, { recursive: true });
    return { cwd: paths.workspace, env: { TMPDIR: tmp } };
  }

  private buildTool(ToolClass: typeof DynamicStructuredTool, server: string, config: McpServerConfig, def: Tool): AntlerTool {
    const name = mcpToolName(server, def.name, config.tool_name_prefix);
    const description = (def.description ?? def.title ?? "").trim() || `Tool ${def.name} of MCP server ${server}.`;
    const schema = { ...def.inputSchema, type: "object" as const, properties: def.inputSchema.properties ?? {} };
    const task = config.tasks?.tools.find((t) => t.tool === def.name);
    const background = task ? this.options.backgroundTasks : undefined;
    return new ToolClass({
      name,
      description: background
        ? `${description}\n\nRuns as a background task: the call returns a task id at once, and you get a message on this thread when it finishes (list_background_tasks shows its state; cancel_background_task stops it).`
        : description,
      schema,
      func: async (input: unknown, _run?: unknown, runConfig?: ToolRunnableConfig) => {
        const ctx = (runConfig?.context ?? {}) as Record<string, unknown>;
        const caller: Caller = { userId: text(ctx.user_id) ?? DEFAULT_USER_ID, threadId: text(ctx.thread_id) };
        const args = (input !== null && typeof input === "object" ? input : {}) as Record<string, unknown>;
        if (background && task) {
          return background.start({ server, config, task, toolName: name, args, caller, runContext: ctx, signal: runConfig?.signal });
        }
        return this.call(server, config, def.name, name, args, caller, runConfig?.signal);
      },
    }) as unknown as AntlerTool;
  }

  /** Calls one MCP tool for a (user, thread), reconnecting when the previous session is gone. */
  async call(
    server: string,
    config: McpServerConfig,
    mcpName: string,
    toolName: string,
    args: Record<string, unknown>,
    caller: Caller,
    signal?: AbortSignal,
  ): Promise<string | ToolContentBlock[]> {
    const result = await this.callRaw(server, config, mcpName, toolName, args, caller, signal);
    if (result.isError) throw new Error(errorText(result.content));
    return toToolContent(result.content, result.structuredContent, config.result_max_chars);
  }

  /** Calls one MCP tool and returns the server's result as it came (an `isError` result is returned, not thrown). */
  async callRaw(
    server: string,
    config: McpServerConfig,
    mcpName: string,
    toolName: string,
    args: Record<string, unknown>,
    caller: Caller,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    let entry: SessionEntry;
    let session: McpSession;
    try {
      entry = this.sessionEntry(server, config, caller);
      session = await entry.session;
    } catch (err) {
      const error = `MCP server ${server} failed to start for ${toolName}: ${message(err)}`;
      this.lastErrors.set(server, error);
      throw new Error(error, { cause: err });
    }
    const result = await this.busyWhile(entry, async () => {
      try {
        return await session.callTool(mcpName, args, signal);
      } catch (err) {
        if (session.exited || isConnectionLoss(err)) {
          const key = this.sessionKey(server, config, caller);
          if (this.sessions.get(key) === entry) this.sessions.delete(key);
          await session.close();
          const tail = session.stderrTail;
          const error = `MCP server ${server} exited during ${toolName}: ${message(err)}${tail ? ` (stderr: ${tail})` : ""}; it will be restarted on the next call`;
          this.lastErrors.set(server, error);
          throw new Error(error, { cause: err });
        }
        if (isTimeout(err)) {
          throw new Error(
            `MCP tool ${toolName} timed out after ${config.call_timeout_seconds}s (call_timeout_seconds of server ${server})`,
            {
              cause: err,
            },
          );
        }
        throw err;
      }
    });
    return result;
  }

  private async closeServerSessions(server: string): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [key, entry] of this.sessions) {
      if (entry.server !== server) continue;
      this.sessions.delete(key);
      closing.push(entry.session.then((s) => s.close()).catch(() => undefined));
    }
    await Promise.all(closing);
  }

  /** The enabled servers as currently configured (the extensions file re-read if it changed), for sharing them with other agents. */
  enabledServers(): Array<{ name: string; config: McpServerConfig }> {
    const { servers } = this.resolveServers();
    return Object.entries(servers)
      .filter(([, entry]) => entry.config.enabled)
      .map(([name, entry]) => ({ name, config: entry.config }));
  }

  /** Per-server state for `antler mcp status`. Does not start anything, and does not re-read the config file. */
  status(): McpStatus {
    const resolved = this.lastResolved;
    const path = this.extensionsConfigPath;
    const known =
      resolved?.servers ??
      Object.fromEntries(Object.entries(this.options.config.servers).map(([n, config]) => [n, { config, origin: "config" as const }]));
    const servers = Object.entries(known).map(([name, { config, origin }]) => {
      const listing = this.settled.get(name);
      const lastError = this.lastErrors.get(name) ?? null;
      const state: McpServerState = !config.enabled ? "disabled" : !listing ? "idle" : listing.ok ? "ready" : "failed";
      const toolNames = listing?.ok ? listing.names : [];
      const sessions = [...this.sessions.values()]
        .filter((s) => s.server === name)
        .map((s) => ({ userId: s.caller.userId, threadId: s.caller.threadId, pid: s.opened?.pid ?? null }));
      return {
        name,
        transport: config.transport,
        origin,
        state,
        toolCount: toolNames.length,
        tools: toolNames,
        lastError,
        starts: this.starts.get(name) ?? 0,
        sessions,
      };
    });
    return {
      extensionsConfig: path ? { path, loads: this.fileCache.loadCount, error: resolved?.error ?? null } : null,
      servers,
    };
  }

  /** The live session of a server for a (user, thread), if one is open; for diagnostics and tests. */
  async openSession(server: string, userId: string | null, threadId: string | null): Promise<McpSession | undefined> {
    const config = this.lastResolved?.servers[server]?.config;
    if (!config) return undefined;
    return this.sessions.get(this.sessionKey(server, config, { userId, threadId }))?.session;
  }

  /** Forgets every listing and the config file, and closes all sessions: the next assembly starts afresh. */
  async reset(): Promise<void> {
    this.fileCache.reset();
    this.lastResolved = undefined;
    this.listings.clear();
    this.settled.clear();
    this.lastErrors.clear();
    this.starts.clear();
    await this.closeAll();
  }

  private async closeAll(): Promise<void> {
    clearInterval(this.reaper);
    this.reaper = undefined;
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((e) => e.session.then((s) => s.close()).catch(() => undefined)));
  }

  /** Closes every session; the catalog contributes no tools afterwards. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await this.closeAll();
  }
}
