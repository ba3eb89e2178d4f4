// expose_tools over streamable HTTP at the gateway's /mcp, driven by the official MCP SDK client: the distribution's
// own tools called directly (no model) through the tool pipeline (guardrails and authorization included), for the
// caller's user on a new thread of theirs, with the request's trace id.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, TRACE_METADATA_KEY, threadPaths } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { startGateway } from "@antler/plugin-gateway";
import guardrailsPlugin from "@antler/plugin-guardrails";
import { AntlerClient } from "@antler/plugin-runtime";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import mcpServer, { LEAD_AGENT_TOOL } from "../src/index.js";

const ALICE = "alice-key-0123456789abcdef";
const BOB = "bob-key-0123456789abcdef01";
const READER = "reader-key-0123456789abcd";

/** What the kernel's run hooks saw: the direct calls' kernel runs. */
const runsSeen: Array<{ event: "start" | "end"; runId: string; traceId: string; threadId?: string; userId?: string; outcome?: string }> =
  [];
/** Set when slow_tool's signal aborts. */
let slowAborted: string | undefined;

/** Tools for the tests: two in group "notes", one that fails, one the guardrail denies, one slow, one never listed. */
function notesPlugin(baseDir: string) {
  return definePlugin({
    name: "notes-tools",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.hooks.runStart.tap((run) => {
        runsSeen.push({ event: "start", runId: run.runId, traceId: run.traceId, threadId: run.threadId, userId: run.userId });
      });
      ctx.hooks.runEnd.tap((run, outcome) => {
        runsSeen.push({ event: "end", runId: run.runId, traceId: run.traceId, outcome });
      });
      ctx.tools.add(
        defineTool({
          name: "slow_tool",
          description: "Waits until cancelled (or a minute).",
          schema: z.object({}),
          run: async (_args, runtime) => {
            const signal = (runtime as { signal?: AbortSignal }).signal;
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, 60_000);
              signal?.addEventListener("abort", () => {
                clearTimeout(timer);
                slowAborted = String(signal.reason ?? "aborted");
                resolve();
              });
            });
            return "slow done";
          },
        }),
        { group: "misc" },
      );
      const contextOf = (runtime: unknown) => ((runtime as { context?: Record<string, unknown> }).context ?? {}) as Record<string, string>;
      ctx.tools.add(
        defineTool({
          name: "lookup_note",
          description: "Looks up a note by key.",
          schema: z.object({ key: z.string().min(1).describe("The note's key."), limit: z.number().int().max(10).optional() }),
          run: async ({ key }, runtime) => {
            const c = contextOf(runtime);
            return `note ${key} for ${c.user_id} on ${c.thread_id} trace ${c[TRACE_METADATA_KEY]}`;
          },
        }),
        { group: "notes" },
      );
      ctx.tools.add(
        defineTool({
          name: "save_note",
          description: "Saves a note into the thread's outputs.",
          schema: z.object({ text: z.string() }),
          run: async ({ text }, runtime) => {
            const c = contextOf(runtime);
            const paths = threadPaths(baseDir, c.user_id ?? "none", c.thread_id ?? "none");
            const { mkdirSync, writeFileSync } = await import("node:fs");
            mkdirSync(paths.outputs, { recursive: true });
            writeFileSync(join(paths.outputs, "note.md"), text);
            return "saved /mnt/user-data/outputs/note.md";
          },
        }),
        { group: "notes" },
      );
      ctx.tools.add(
        defineTool({
          name: "broken_tool",
          description: "Always fails.",
          schema: z.object({}),
          run: async () => {
            throw new Error("the backend is down");
          },
        }),
        { group: "misc" },
      );
      ctx.tools.add(
        defineTool({ name: "blocked_tool", description: "Denied by policy.", schema: z.object({}), run: async () => "ran anyway" }),
        { group: "misc" },
      );
      ctx.tools.add(defineTool({ name: "secret_tool", description: "Never exposed.", schema: z.object({}), run: async () => "secret" }), {
        group: "misc",
      });
    },
  });
}

async function distribution(dir: string, mcpConfig: Record<string, unknown>) {
  return AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      logging: { level: "warn" },
      guardrails: { enabled: true, providers: [{ use: "allowlist", config: { denied_tools: ["blocked_tool"] } }] },
      authorization: {
        enabled: true,
        // The default role lacks the notes group, so the start-time check must look past it to accept group:notes.
        default_role: "reader",
        roles: { user: { tool_groups: ["*"], models: ["*"] }, reader: { tool_groups: ["misc"], models: ["*"] } },
      },
    },
    plugins: [
      scriptedModelsPlugin({ m: { respond: () => ({ text: "hi" }) } }),
      notesPlugin(dir),
      guardrailsPlugin,
      { plugin: mcpServer, config: mcpConfig },
    ],
    cwd: dir,
    env: {},
    discover: false,
  });
}

const API_KEYS = [
  { key: ALICE, user: "alice", role: "user" },
  { key: BOB, user: "bob", role: "user" },
  { key: READER, user: "rita", role: "reader" },
];

const texts = (result: object) =>
  (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>)
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "");
const metaOf = (result: object) => ((result as { _meta?: Record<string, string> })._meta ?? {}) as Record<string, string>;

describe("expose_tools over streamable HTTP at /mcp", () => {
  let dir: string;
  let antler: AntlerClient;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  const open: Client[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "antler-mcp-expose-"));
    antler = await distribution(dir, { agents: [], expose_tools: ["group:notes", "broken_tool", "blocked_tool", "slow_tool"] });
    gateway = await startGateway({
      client: antler,
      config: { port: 0, auth: { mode: "api_keys", api_keys: API_KEYS } },
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
    const client = new Client({ name: "mcp-expose-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    );
    open.push(client);
    return client;
  }

  it("lists the listed tools (a group and names) after the agent tools, each with its zod schema as JSON Schema", async () => {
    const alice = await connect(ALICE);
    const { tools } = await alice.listTools();
    expect(tools.map((t) => t.name)).toEqual([LEAD_AGENT_TOOL, "slow_tool", "lookup_note", "save_note", "broken_tool", "blocked_tool"]);
    const lookup = tools.find((t) => t.name === "lookup_note");
    expect(lookup?.description).toBe("Looks up a note by key.");
    expect(lookup?.inputSchema).toMatchObject({
      type: "object",
      required: ["key"],
      properties: { key: { type: "string", minLength: 1, description: "The note's key." }, limit: { type: "integer", maximum: 10 } },
    });
  });

  it("never lists or runs a tool that is not listed: secret_tool is absent and calling it is -32602", async () => {
    const alice = await connect(ALICE);
    expect((await alice.listTools()).tools.map((t) => t.name)).not.toContain("secret_tool");
    const err = await alice.callTool({ name: "secret_tool", arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
  });

  it("runs a tool directly for the caller, on a new thread of theirs, with the request's trace id", async () => {
    const alice = await connect(ALICE);
    const result = await alice.callTool({ name: "lookup_note", arguments: { key: "k1" } });
    expect(result.isError).toBeFalsy();
    const meta = metaOf(result);
    expect(meta["antler/thread_id"]).toMatch(/.+/);
    expect(meta["antler/trace_id"]).toMatch(/.+/);
    expect(texts(result)).toEqual([`note k1 for alice on ${meta["antler/thread_id"]} trace ${meta["antler/trace_id"]}`]);
    const thread = await antler.getThreadRecord(meta["antler/thread_id"] ?? "", { userId: "alice" });
    expect(thread.metadata).toMatchObject({ source: "mcp-tool", tool: "lookup_note" });
    // One kernel run (the hooks tracing and metrics watch) on that thread, for alice, with the same trace id.
    const runId = meta["antler/run_id"];
    expect(runsSeen.filter((r) => r.runId === runId)).toEqual([
      { event: "start", runId, traceId: meta["antler/trace_id"], threadId: meta["antler/thread_id"], userId: "alice" },
      { event: "end", runId, traceId: meta["antler/trace_id"], outcome: "success" },
    ]);
  });

  it("cancels the tool when the request is cancelled: its signal aborts and its kernel run ends cancelled", async () => {
    const alice = await connect(ALICE);
    const abort = new AbortController();
    const before = runsSeen.length;
    const call = alice.callTool({ name: "slow_tool", arguments: {} }, undefined, { signal: abort.signal }).catch((e: unknown) => e);
    await vi.waitFor(() => expect(runsSeen.slice(before).some((r) => r.event === "start")).toBe(true));
    const started = runsSeen.slice(before).find((r) => r.event === "start");
    expect(slowAborted).toBeUndefined();
    abort.abort("stop");
    expect(await call).toBeDefined();
    await vi.waitFor(() => expect(slowAborted).toBeDefined());
    await vi.waitFor(() => expect(runsSeen.find((r) => r.event === "end" && r.runId === started?.runId)?.outcome).toBe("cancelled"));
  });

  it("uses the trace id the caller sends in X-Trace-Id", async () => {
    const client = new Client({ name: "mcp-expose-trace", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${ALICE}`, "x-trace-id": "trace-from-caller-42" } },
      }),
    );
    open.push(client);
    const result = await client.callTool({ name: "lookup_note", arguments: { key: "k2" } });
    expect(metaOf(result)["antler/trace_id"]).toBe("trace-from-caller-42");
    expect(texts(result)[0]).toMatch(/trace trace-from-caller-42$/);
  });

  it("answers arguments that do not match the schema with isError and the schema's message; nothing runs", async () => {
    const alice = await connect(ALICE);
    const before = (await antler.listThreads({ userId: "alice", limit: 100 })).length;
    const result = await alice.callTool({ name: "lookup_note", arguments: { key: "", limit: 99 } });
    expect(result.isError).toBe(true);
    const [text] = texts(result);
    expect(text).toMatch(/^Invalid arguments for tool lookup_note:/);
    expect(text).toMatch(/key/);
    expect(text).toMatch(/limit/);
    expect(text).toMatch(/<=10/);
    expect((await antler.listThreads({ userId: "alice", limit: 100 })).length).toBe(before);
  });

  it("answers a tool that throws with isError and its message", async () => {
    const alice = await connect(ALICE);
    const result = await alice.callTool({ name: "broken_tool", arguments: {} });
    expect(result.isError).toBe(true);
    expect(texts(result).join("\n")).toMatch(/the backend is down/);
  });

  it("goes through the guardrail middleware: a denied tool is isError with the policy's reason and never runs", async () => {
    const alice = await connect(ALICE);
    const result = await alice.callTool({ name: "blocked_tool", arguments: {} });
    expect(result.isError).toBe(true);
    const text = texts(result).join("\n");
    expect(text).toMatch(/denied by policy "allowlist"/);
    expect(text).not.toMatch(/ran anyway/);
  });

  it("follows authorization: a role without the notes group neither sees nor runs the notes tools", async () => {
    const rita = await connect(READER);
    expect((await rita.listTools()).tools.map((t) => t.name)).toEqual([LEAD_AGENT_TOOL, "slow_tool", "broken_tool", "blocked_tool"]);
    const err = await rita.callTool({ name: "lookup_note", arguments: { key: "k" } }).catch((e: unknown) => e);
    expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
  });

  it("keeps users apart: each key's call runs as its user, and bob cannot read the file alice's call wrote", async () => {
    const alice = await connect(ALICE);
    const bob = await connect(BOB);
    const bobs = await bob.callTool({ name: "lookup_note", arguments: { key: "k" } });
    expect(texts(bobs)[0]).toMatch(/^note k for bob on /);
    const saved = await alice.callTool({ name: "save_note", arguments: { text: "alice's secret" } });
    expect(saved.isError).toBeFalsy();
    const threadId = metaOf(saved)["antler/thread_id"] ?? "";
    const uri = `antler://threads/${threadId}/artifacts/mnt/user-data/outputs/note.md`;
    expect(readFileSync(join(threadPaths(dir, "alice", threadId).outputs, "note.md"), "utf8")).toBe("alice's secret");
    const mine = await alice.readResource({ uri });
    expect((mine.contents[0] as { text?: string }).text).toBe("alice's secret");
    const theirs = await bob.readResource({ uri }).catch((e: unknown) => e);
    expect((theirs as McpError).code).toBe(-32002);
    await expect(antler.getThreadRecord(threadId, { userId: "bob" })).rejects.toThrow();
  });
});

describe("expose_tools config errors", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "antler-mcp-expose-bad-"));
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function startError(exposeTools: string[]): Promise<Error & { code?: string; hint?: string }> {
    const antler = await distribution(join(dir, String(Math.random()).slice(2)), { expose_tools: exposeTools });
    try {
      const gateway = await startGateway({ client: antler, config: { port: 0, auth: { mode: "api_keys", api_keys: API_KEYS } } }).catch(
        (e: unknown) => e as Error,
      );
      if (!(gateway instanceof Error)) {
        await gateway.close();
        throw new Error("the gateway started");
      }
      return (gateway as Error & { cause?: Error }).cause as Error & { code?: string; hint?: string };
    } finally {
      await antler.close();
    }
  }

  it("stops the gateway at start on an unknown tool name, listing the tools that can be exposed", async () => {
    const err = await startError(["lookup_note", "no_such_tool"]);
    expect(err.code).toBe("ANTLER_ERR_CONFIG_INVALID");
    expect(err.message).toMatch(/no tool named "no_such_tool"/);
    expect(err.message).toMatch(/expose_tools\[1\]/);
    expect(err.hint).toMatch(/Tools that can be exposed: .*lookup_note.*save_note/);
    expect(err.hint).toMatch(/group:notes/);
    expect(err.hint).not.toMatch(/ask_clarification/);
  });

  it("refuses a tool that only works inside an agent turn, and an empty group", async () => {
    const turn = await startError(["ask_clarification"]);
    expect(turn.code).toBe("ANTLER_ERR_CONFIG_INVALID");
    expect(turn.message).toMatch(/"ask_clarification" only works inside an agent's turn/);
    const group = await startError(["group:nothing"]);
    expect(group.message).toMatch(/no tool that can be exposed is in group "nothing"/);
  });
});
