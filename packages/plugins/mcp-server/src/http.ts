import { randomUUID } from "node:crypto";
import type { Logger } from "@antler/kernel";
import type { GatewayRequest } from "@antler/plugin-runtime/routes";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CALLER_KEY, type McpCaller } from "./caller.js";
import type { McpServerConfig } from "./config.js";
import { ExposedToolRunner } from "./exposed-tools.js";
import { createAntlerMcpServer } from "./server.js";

interface Session {
  readonly id: string;
  readonly userId: string;
  readonly server: Server;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  lastUsed: number;
}

/**
 * The streamable-HTTP sessions of one gateway instance. Session mode, not stateless: `notifications/cancelled`
 * arrives in a POST of its own and must reach the server instance whose handler runs the call, so each session
 * keeps its server in memory. A session belongs to the user whose API key opened it; any other key gets the same
 * 404 as an unknown session. Idle sessions are closed (their live calls cancelled), and at most `max_sessions`
 * live at once (the least recently used is closed first).
 */
export class McpHttpSessions {
  private readonly sessions = new Map<string, Session>();
  /** Shared by every session: the direct tool calls' middleware chain is compiled once per gateway instance. */
  private exposed: ExposedToolRunner | undefined;
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly options: {
      config: McpServerConfig;
      logger: Logger;
      now?: () => number;
    },
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  async handle(req: GatewayRequest): Promise<Response> {
    const caller: McpCaller = {
      userId: req.userId,
      ...(req.principal.role !== undefined ? { role: req.principal.role } : {}),
      traceId: req.traceId,
    };
    // The transport hands this to every handler of the request: the caller is always this request's key's user.
    const authInfo: AuthInfo = { token: "", clientId: req.userId, scopes: [], extra: { [CALLER_KEY]: caller } };
    const sessionId = req.request.headers.get("mcp-session-id");
    if (sessionId !== null) {
      const session = this.sessions.get(sessionId);
      if (!session || session.userId !== req.userId) return sessionNotFound();
      session.lastUsed = this.now();
      // Most recently used last: the first entry is the one to close when the cap is reached.
      this.sessions.delete(sessionId);
      this.sessions.set(sessionId, session);
      return session.transport.handleRequest(req.request, { authInfo });
    }
    return this.open(req, caller, authInfo);
  }

  /** A request without a session: an `initialize` opens one; anything else is answered (400) by a throwaway transport. */
  private async open(req: GatewayRequest, caller: McpCaller, authInfo: AuthInfo): Promise<Response> {
    const { config, logger } = this.options;
    let opened: Session | undefined;
    this.exposed ??= new ExposedToolRunner(req.client, config, logger);
    const server = createAntlerMcpServer({ client: req.client, config, logger, caller, exposed: this.exposed });
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: config.http.max_body_bytes,
      onsessioninitialized: (id) => {
        opened = { id, userId: caller.userId, server, transport, lastUsed: this.now() };
        this.admit(opened);
      },
      onsessionclosed: (id) => {
        void this.close(id, "closed by the client");
      },
    });
    await server.connect(transport);
    const response = await transport.handleRequest(req.request, { authInfo });
    if (!opened) await server.close().catch(() => undefined);
    return response;
  }

  private admit(session: Session): void {
    const { config, logger } = this.options;
    while (this.sessions.size >= config.http.max_sessions) {
      const oldest = this.sessions.keys().next().value as string;
      logger.info({ session_id: oldest }, "MCP session closed: the gateway holds max_sessions");
      void this.close(oldest, "over max_sessions");
    }
    this.sessions.set(session.id, session);
    this.sweeper ??= setInterval(() => this.sweep(), Math.min(60_000, (config.http.session_idle_seconds * 1000) / 4));
    this.sweeper.unref?.();
  }

  /** Closes sessions idle past `session_idle_seconds`. */
  sweep(): void {
    const cutoff = this.now() - this.options.config.http.session_idle_seconds * 1000;
    for (const session of [...this.sessions.values()]) if (session.lastUsed < cutoff) void this.close(session.id, "idle");
  }

  /** Closes one session: its server stops, and its live calls are aborted (their runs end cancelled). */
  async close(id: string, reason: string): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    if (this.sessions.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
    this.options.logger.debug({ session_id: id, reason }, "MCP session closed");
    await session.server.close().catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id, "gateway shutting down")));
  }
}

/** What the SDK's own transport answers for an unknown session: HTTP 404 with a JSON-RPC error body. */
function sessionNotFound(): Response {
  return Response.json({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }, { status: 404 });
}
