// `antler mcp serve` as a real child process (the compiled CLI, SQLite storage, the openai plugin against a loopback
// OpenAI-compatible model server, a tool from a local plugin file), driven over stdio by the official MCP SDK client.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  antlerBinPath,
  antlerCliBuilt,
  loopbackModelConfig,
  type OpenAICompatibleServer,
  startOpenAICompatibleServer,
} from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, McpError, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const bin = antlerBinPath();
const dists = {
  mcpServer: resolve(here, "../dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && antlerCliBuilt();
const REPORT_PATH = "/mnt/user-data/outputs/report.md";

interface AskResult {
  answer: string;
  thread_id: string;
  run_id: string;
  files: Array<{ uri: string }>;
}
const structured = (result: object) => (result as { structuredContent?: unknown }).structuredContent as AskResult;

describe.skipIf(!built)("`antler mcp serve` over stdio (compiled CLI in a child process; needs a build first)", () => {
  let dir: string;
  let baseDir: string;
  let model: OpenAICompatibleServer;
  let client: Client;
  let transport: StdioClientTransport;
  let stderr = "";

  beforeAll(async () => {
    // "report": write_report, then present_files, then an answer; "wait": an answer a minute away; else an echo
    // that counts the thread's user messages, so a continued thread shows.
    model = await startOpenAICompatibleServer({
      handler: (body) => {
        const last = body.messages.at(-1);
        const users = body.messages.filter((m) => m.role === "user");
        const text = typeof users.at(-1)?.content === "string" ? (users.at(-1)?.content as string) : "";
        if (last?.role === "tool") {
          if (String(last.content).startsWith("wrote"))
            return { toolCalls: [{ name: "present_files", args: { filepaths: [REPORT_PATH] } }] };
          return { text: "Here is the report." };
        }
        if (text.includes("report")) return { toolCalls: [{ name: "write_report", args: { topic: "antlers" } }] };
        if (text.includes("wait")) return { text: "too late", delayMs: 60_000 };
        return { text: `You said: ${text} (turn ${users.length})` };
      },
    });
    dir = mkdtempSync(join(tmpdir(), "antler-mcp-serve-"));
    baseDir = join(dir, "data");
    writeFileSync(
      join(dir, "report-tool.mjs"),
      [
        'import { mkdirSync, writeFileSync } from "node:fs";',
        'import { join } from "node:path";',
        "export default ({ definePlugin, defineTool, z }) => definePlugin({",
        '  name: "report-tool", version: "1.0.0", kernel: "^0.1.0",',
        "  setup(ctx) {",
        "    ctx.tools.add(defineTool({",
        '      name: "write_report", description: "Writes the report.", schema: z.object({ topic: z.string() }),',
        "      run: (_args, runtime) => {",
        "        const c = runtime.context;",
        `        const outputs = join(${JSON.stringify(baseDir)}, "users", c.user_id, "threads", c.thread_id, "user-data", "outputs");`,
        "        mkdirSync(outputs, { recursive: true });",
        '        writeFileSync(join(outputs, "report.md"), "# Report\\n");',
        `        return "wrote ${REPORT_PATH}";`,
        "      },",
        "    }));",
        "  },",
        "});",
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "config.yaml"),
      [
        `base_dir: ${JSON.stringify(baseDir)}`,
        ...loopbackModelConfig(model.url),
        "plugins:",
        `  - path: ${JSON.stringify(dists.openai)}`,
        "  - path: ./report-tool.mjs",
        `  - path: ${JSON.stringify(dists.mcpServer)}`,
        "    config:",
        "      stdio: { user: carol }",
        "",
      ].join("\n"),
    );
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, "mcp", "serve", "--config", join(dir, "config.yaml")],
      cwd: dir,
      env: { ...(process.env as Record<string, string>), ANTLER_CONFIG: "" },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    client = new Client({ name: "mcp-serve-test", version: "1.0.0" });
    await client.connect(transport);
  }, 90_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The run records as the distribution's own client reads them (same base_dir and database), as `carol`. */
  async function runRecords<T>(read: (antler: AntlerClient) => Promise<T>): Promise<T> {
    const antler = await AntlerClient.create({
      config: {
        base_dir: baseDir,
        storage: { backend: "sqlite" },
        models: [{ name: "m", provider: "cassette" }],
        logging: { level: "error" },
      },
      cwd: dir,
      env: {},
      discover: false,
    });
    try {
      return await read(antler);
    } finally {
      await antler.close();
    }
  }

  it("lists the lead agent as ask_agent", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["ask_agent"]);
    expect(tools[0]?.inputSchema.required).toEqual(["message"]);
  });

  it("answers as the configured user with progress, and a second call with the thread_id continues the thread", async () => {
    const progress: Progress[] = [];
    const first = await client.callTool({ name: "ask_agent", arguments: { message: "hello" } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    const out = structured(first);
    expect(out.answer).toBe("You said: hello (turn 1)");
    expect(progress[0]?.message).toBe(`run ${out.run_id} started on thread ${out.thread_id}`);
    expect(progress.map((p) => p.message)).toContain("You said: hello (turn 1)");
    const second = await client.callTool({ name: "ask_agent", arguments: { message: "more", thread_id: out.thread_id } });
    expect(structured(second)).toMatchObject({ answer: "You said: more (turn 2)", thread_id: out.thread_id });
    const runs = await runRecords((a) => a.listRuns(out.thread_id, { userId: "carol" }));
    expect(runs.map((r) => r.status)).toEqual(["success", "success"]);
  });

  it("returns a presented file as a resource link and reads it as a resource", async () => {
    const result = await client.callTool({ name: "ask_agent", arguments: { message: "write the report" } });
    const out = structured(result);
    const uri = `antler://threads/${out.thread_id}/artifacts${REPORT_PATH}`;
    expect(out.files.map((f) => f.uri)).toEqual([uri]);
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain(uri);
    expect((await client.readResource({ uri })).contents).toEqual([{ uri, mimeType: "text/markdown", text: "# Report\n" }]);
    const missing = await client
      .readResource({ uri: `antler://threads/${out.thread_id}/artifacts/mnt/user-data/outputs/none.md` })
      .catch((e: unknown) => e);
    expect((missing as McpError).code).toBe(-32002);
  });

  it("cancels the run when the request is cancelled (its record ends cancelled), and refuses an unknown tool with -32602", async () => {
    const abort = new AbortController();
    let started: string | undefined;
    const rejected = await client
      .callTool({ name: "ask_agent", arguments: { message: "please wait" } }, undefined, {
        signal: abort.signal,
        onprogress: (p) => {
          started ??= p.message;
          abort.abort("stop");
        },
      })
      .catch((e: unknown) => e);
    expect(rejected).toBeDefined();
    const [, runId, threadId] = /^run (\S+) started on thread (\S+)$/.exec(started ?? "") ?? [];
    await vi.waitFor(
      async () =>
        expect((await runRecords((a) => a.getRun(threadId as string, runId as string, { userId: "carol" }))).status).toBe("cancelled"),
      { timeout: 20_000, interval: 300 },
    );
    const unknown = await client.callTool({ name: "ask_nobody", arguments: { message: "hi" } }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(ErrorCode.InvalidParams);
  });

  it("exits when the client closes its stdin, with no failure on stderr", async () => {
    const pid = transport.pid as number;
    const exited = new Promise<number | null>((resolveExit) => {
      // The SDK's transport owns the child; watch it through the pid.
      const timer = setInterval(() => {
        try {
          process.kill(pid, 0);
        } catch {
          clearInterval(timer);
          resolveExit(null);
        }
      }, 100);
    });
    await client.close();
    await exited;
    // It stopped because stdin closed (not the transport's SIGTERM 2 s later), and said so on stderr.
    expect(stderr).toContain("antler mcp serve: stopped (stdin closed; 0 live runs cancelled)");
    expect(stderr).not.toMatch(/unhandled|✖/);
  });
});
