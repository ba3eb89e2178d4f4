import { fetchWithTraceId, getCurrentTraceId } from "@antler/kernel";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "./config.js";
import { OAuthTokenSource } from "./oauth.js";
import { PLUGIN_VERSION } from "./version.js";

/** Key under which stdio requests carry the trace id in `_meta` (HTTP requests use the X-Trace-Id header). */
export const TRACE_META_KEY = "antler/trace_id";

const STDERR_TAIL_CHARS = 2000;

export interface OpenSessionOptions {
  /** Working directory of a stdio server: the thread workspace. */
  cwd?: string | undefined;
  /** Extra environment for a stdio server (TMPDIR inside the workspace). */
  env?: Readonly<Record<string, string>> | undefined;
  /** Called once when the connection closes without `close()` being called (the process exited). */
  onUnexpectedClose?: ((session: McpSession) => void) | undefined;
}

function traceMeta(): Record<string, string> | undefined {
  const id = getCurrentTraceId();
  return id ? { [TRACE_META_KEY]: id } : undefined;
}

/** One live connection to one MCP server (for stdio: one child process). */
// The SDK (mostly its zod schemas, built at import) loads with the first connection, not with the plugin, so
// `antler config check` and `antler plugins list` stay light. No McpError exists before it has loaded.
let sdkTypes: typeof import("@modelcontextprotocol/sdk/types.js") | undefined;

export class McpSession {
  private closing = false;
  private exitedFlag = false;
  private tail = "";

  private constructor(
    readonly server: string,
    readonly config: McpServerConfig,
    private readonly client: Client,
    private readonly transport: Transport,
  ) {}

  static async open(server: string, config: McpServerConfig, options: OpenSessionOptions = {}): Promise<McpSession> {
    const oauth = config.transport !== "stdio" && config.oauth ? new OAuthTokenSource(server, config.oauth) : undefined;
    // Fetch the token first, so a bad client secret is reported as such rather than as a 401 from the server.
    if (oauth) await oauth.token();
    const [{ Client }, types] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/types.js"),
    ]);
    sdkTypes = types;
    const transport = await createTransport(config, options, oauth);
    const client = new Client({ name: "antler", version: PLUGIN_VERSION });
    const session = new McpSession(server, config, client, transport);
    if (config.transport === "stdio") {
      // Read stderr continuously: an unread pipe fills up and stalls the server; the tail explains crashes.
      (transport as StdioClientTransport).stderr?.on("data", (chunk: Buffer | string) => {
        session.tail = (session.tail + String(chunk)).slice(-STDERR_TAIL_CHARS);
      });
    }
    client.onclose = () => {
      if (session.closing || session.exitedFlag) return;
      session.exitedFlag = true;
      options.onUnexpectedClose?.(session);
    };
    try {
      await client.connect(transport, { timeout: config.init_timeout_seconds * 1000 });
    } catch (err) {
      await session.close();
      const tail = session.stderrTail;
      throw new Error(`${(err as Error).message ?? String(err)}${tail ? ` (stderr: ${tail})` : ""}`, { cause: err });
    }
    return session;
  }

  /** The child process id of a stdio server; `null` for HTTP/SSE. */
  get pid(): number | null {
    return this.config.transport === "stdio" ? (this.transport as StdioClientTransport).pid : null;
  }

  /** Whether the connection went away without `close()` (a crashed or killed server). */
  get exited(): boolean {
    return this.exitedFlag;
  }

  get stderrTail(): string {
    return this.tail.trim();
  }

  async listTools(): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const meta = this.config.transport === "stdio" ? traceMeta() : undefined;
      const page = await this.client.listTools(
        { ...(cursor ? { cursor } : {}), ...(meta ? { _meta: meta } : {}) },
        { timeout: this.config.init_timeout_seconds * 1000 },
      );
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  async callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    const meta = this.config.transport === "stdio" ? traceMeta() : undefined;
    const result = await this.client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }, undefined, {
      timeout: this.config.call_timeout_seconds * 1000,
      ...(signal ? { signal } : {}),
    });
    return result as CallToolResult;
  }

  /** Closes the connection (and stops a stdio child). Idempotent. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await this.client.close().catch(() => undefined);
  }
}

async function createTransport(config: McpServerConfig, options: OpenSessionOptions, oauth?: OAuthTokenSource): Promise<Transport> {
  if (config.transport === "stdio") {
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    return new StdioClientTransport({
      command: config.command ?? "",
      args: config.args,
      env: { ...stdioBaseEnv(), ...config.env, ...(options.env ?? {}) },
      ...(options.cwd ? { cwd: options.cwd } : {}),
      stderr: "pipe",
    });
  }
  const url = new URL(config.url ?? "");
  // The trace id is read per request (inside the run's trace scope), never fixed at connect time.
  const opts = {
    requestInit: { headers: { ...config.headers } },
    fetch: fetchWithTraceId(oauth ? oauth.authorizedFetch() : globalThis.fetch),
  };
  // Loaded on demand: stdio-only setups never load the HTTP/SSE stack and its parsers.
  if (config.transport === "http") {
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    return new StreamableHTTPClientTransport(url, opts);
  }
  const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
  return new SSEClientTransport(url, opts);
}

// The SDK's default stdio environment only inherits a short allow-list; keep PATH and HOME so `npx`/`uvx` work.
function stdioBaseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ["PATH", "HOME", "USER", "LANG", "SHELL", "TERM", "NODE_OPTIONS", "SYSTEMROOT", "APPDATA"]) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

/** Whether an error means the connection is gone (rather than the tool or the request failing). */
export function isConnectionLoss(error: unknown): boolean {
  if (sdkTypes && error instanceof sdkTypes.McpError)
    return error.code === sdkTypes.ErrorCode.ConnectionClosed && error.message.includes("Connection closed");
  if (error instanceof TypeError && /fetch failed|terminated|ECONNREFUSED|ECONNRESET/i.test(error.message)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return code === "EPIPE" || code === "ECONNRESET" || code === "ERR_STREAM_DESTROYED";
}

export function isTimeout(error: unknown): boolean {
  return sdkTypes !== undefined && error instanceof sdkTypes.McpError && error.code === sdkTypes.ErrorCode.RequestTimeout;
}
