// Antler as an MCP server over streamable HTTP at the gateway's /mcp, driven by the official MCP SDK client: a real
// gateway on loopback, SQLite storage, a scripted model, two API keys (two users).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import mcpServer, { LEAD_AGENT_TOOL } from "../src/index.js";
import { REPORT_PATH, REPORT_TEXT, reportToolPlugin, script } from "./fixtures.js";

const ALICE = "alice-key-0123456789abcdef";
const BOB = "bob-key-0123456789abcdef01";

let dir: string;
let antler: AntlerClient;
let gateway: RunningGateway;
const open: Client[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "antler-mcp-server-http-"));
  antler = await AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      logging: { level: "warn" },
    },
    plugins: [
      scriptedModelsPlugin({ m: { respond: script } }),
      reportToolPlugin(dir),
      { plugin: mcpServer, config: { max_message_chars: 2000 } },
    ],
    cwd: dir,
    env: {},
    discover: false,
  });
  await antler.saveAgent("research-helper", { soul: "You research.", description: "Looks things up." }, { userId: "alice" });
  gateway = await startGateway({
    client: antler,
    config: {
      port: 0,
      auth: {
        mode: "api_keys",
        api_keys: [
          { key: ALICE, user: "alice" },
          { key: BOB, user: "bob" },
        ],
      },
    },
    shutdownGraceMs: 500,
  });
});

afterAll(async () => {
  for (const c of open) await c.close().catch(() => undefined);
  await gateway?.close();
  await antler?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: "mcp-server-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  open.push(client);
  return client;
}

interface AskResult {
  answer: string;
  status: string;
  thread_id: string;
  run_id: string;
  trace_id: string;
  files: Array<{ uri: string; name: string; path: string }>;
}

const structured = (result: object) => (result as { structuredContent?: unknown }).structuredContent as AskResult;
const texts = (result: object) =>
  (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>)
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "");

describe("MCP server over streamable HTTP at /mcp", () => {
  it("lists the lead agent and the user's custom agents as ask_<agent> tools with a message/thread_id input", async () => {
    const alice = await connect(ALICE);
    const { tools } = await alice.listTools();
    expect(tools.map((t) => t.name)).toEqual([LEAD_AGENT_TOOL, "ask_research_helper"]);
    expect(tools[0]?.inputSchema).toMatchObject({ type: "object", required: ["message"] });
    expect(Object.keys(tools[0]?.inputSchema.properties ?? {})).toEqual(["message", "thread_id"]);
    // Custom agents are per user: bob does not see alice's.
    const bob = await connect(BOB);
    expect((await bob.listTools()).tools.map((t) => t.name)).toEqual([LEAD_AGENT_TOOL]);
  });

  it("answers with the agent's text and a thread_id; a second call with it continues the same thread", async () => {
    const alice = await connect(ALICE);
    await alice.listTools();
    const first = await alice.callTool({ name: LEAD_AGENT_TOOL, arguments: { message: "hello" } });
    expect(first.isError).toBeFalsy();
    const out = structured(first);
    expect(out).toMatchObject({ answer: "You said: hello (turn 1)", status: "completed", files: [] });
    expect(texts(first)).toEqual([
      "You said: hello (turn 1)",
      `thread_id: ${out.thread_id} (pass it as thread_id to continue this conversation)`,
    ]);
    const second = await alice.callTool({ name: LEAD_AGENT_TOOL, arguments: { message: "again", thread_id: out.thread_id } });
    expect(structured(second)).toMatchObject({ answer: "You said: again (turn 2)", thread_id: out.thread_id });
    const runs = await antler.listRuns(out.thread_id, { userId: "alice" });
    expect(runs.map((r) => r.status)).toEqual(["success", "success"]);
    // The run record carries the trace id the answer names.
    expect(runs.map((r) => r.trace_id)).toContain(structured(second).trace_id);
  });

  it("sends progress notifications from the run's events and returns a presented file as a resource link, readable as a resource", async () => {
    const alice = await connect(ALICE);
    await alice.listTools();
    const progress: Progress[] = [];
    const result = await alice.callTool({ name: LEAD_AGENT_TOOL, arguments: { message: "write the report" } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    const out = structured(result);
    expect(out.answer).toBe("Here is the report.");
    const messages = progress.map((p) => p.message);
    expect(messages[0]).toBe(`run ${out.run_id} started on thread ${out.thread_id}`);
    expect(messages).toContain("calling tool write_report");
    expect(messages).toContain("tool present_files finished");
    expect(messages).toContain("Here is the report.");
    expect(messages.at(-1)).toBe("run finished");
    // Progress only increases.
    expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
    const uri = `antler://threads/${out.thread_id}/artifacts${REPORT_PATH}`;
    expect(out.files).toEqual([{ uri, name: "report.md", path: REPORT_PATH }]);
    expect(result.content).toContainEqual({ type: "resource_link", uri, name: "report.md", mimeType: "text/markdown" });

    const { resourceTemplates } = await alice.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["antler://threads/{thread_id}/artifacts/{+path}"]);
    const { resources } = await alice.listResources();
    expect(resources.map((r) => r.uri)).toContain(uri);
    const read = await alice.readResource({ uri });
    expect(read.contents).toEqual([{ uri, mimeType: "text/markdown", text: REPORT_TEXT }]);

    // Another user reads nothing of it: not in their list, and a read is the spec's resource-not-found.
    const bob = await connect(BOB);
    expect((await bob.listResources()).resources.map((r) => r.uri)).not.toContain(uri);
    const refused = await bob.readResource({ uri }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32002);
  });

  it("cancels the Antler run when the caller cancels the request (notifications/cancelled): the run ends cancelled, nothing left running", async () => {
    const alice = await connect(ALICE);
    await alice.listTools();
    const abort = new AbortController();
    let started: string | undefined;
    const call = alice
      .callTool({ name: LEAD_AGENT_TOOL, arguments: { message: "please wait" } }, undefined, {
        signal: abort.signal,
        onprogress: (p) => {
          started ??= p.message;
          abort.abort("changed my mind");
        },
      })
      .catch((e: unknown) => e);
    const rejected = await call;
    expect(String(rejected)).toMatch(/changed my mind|abort/i);
    const [, runId, threadId] = /^run (\S+) started on thread (\S+)$/.exec(started ?? "") ?? [];
    expect(runId).toBeDefined();
    await vi.waitFor(
      async () => expect((await antler.getRun(threadId as string, runId as string, { userId: "alice" })).status).toBe("cancelled"),
      {
        timeout: 10_000,
      },
    );
    await vi.waitFor(() => expect(antler.activeRuns).toBe(0), { timeout: 10_000 });
  });

  it("refuses bad input the way the protocol says: unknown tool (-32602), bad arguments and foreign threads as tool errors", async () => {
    const alice = await connect(ALICE);
    await alice.listTools();
    const unknown = await alice.callTool({ name: "ask_nobody", arguments: { message: "hi" } }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((unknown as McpError).message).toContain("Unknown tool: ask_nobody");

    const missing = await alice.callTool({ name: LEAD_AGENT_TOOL, arguments: { thread_id: "x" } });
    expect(missing.isError).toBe(true);
    expect(texts(missing)[0]).toMatch(/^Invalid arguments for tool ask_agent: .*message/s);

    const oversized = await alice.callTool({ name: LEAD_AGENT_TOOL, arguments: { message: "x".repeat(2001) } });
    expect(oversized.isError).toBe(true);
    expect(texts(oversized)[0]).toMatch(/Invalid arguments for tool ask_agent: .*message/s);

    const own = structured(await alice.callTool({ name: LEAD_AGENT_TOOL, arguments: { message: "mine" } }));
    const bob = await connect(BOB);
    await bob.listTools();
    const runsBefore = (await antler.listRuns(own.thread_id, { userId: "alice" })).length;
    const foreign = await bob.callTool({ name: LEAD_AGENT_TOOL, arguments: { message: "let me in", thread_id: own.thread_id } });
    expect(foreign.isError).toBe(true);
    expect(texts(foreign)[0]).toContain(`thread_id ${JSON.stringify(own.thread_id)} is not a conversation of this caller`);
    // Nothing ran: alice's thread is untouched and bob got no thread of that id.
    expect(await antler.listRuns(own.thread_id, { userId: "alice" })).toHaveLength(runsBefore);
    await expect(antler.getThreadRecord(own.thread_id, { userId: "bob" })).rejects.toMatchObject({ code: "ANTLER_ERR_THREAD_NOT_FOUND" });
  });

  it("answers a wrong API key with 401 before any MCP session exists, and another key's session id with 404", async () => {
    const client = new Client({ name: "mcp-server-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
      requestInit: { headers: { authorization: "Bearer not-a-key-0123456789" } },
    });
    const refused = await client.connect(transport).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(401);

    const alice = await connect(ALICE);
    const sessionId = (alice.transport as StreamableHTTPClientTransport).sessionId as string;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const hijack = await fetch(`${gateway.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${BOB}`,
        "mcp-session-id": sessionId,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(hijack.status).toBe(404);
    expect(await hijack.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32001 } });
  });
});
