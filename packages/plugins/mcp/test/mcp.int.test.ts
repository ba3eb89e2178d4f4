import type { ChildProcess } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Kernel } from "@antler/kernel";
import { createTestKernel, scriptedModelsPlugin } from "@antler/kernel/testing";
import type { StreamEvent } from "@antler/plugin-runtime";
import { AntlerClient } from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import mcpPlugin, { MCP_TOOLS, type McpToolCatalog } from "../src/index.js";
import { alive, EVERYTHING, everythingStdio, removeTempDirs, startEverythingHttp, stopProcess, tempDir } from "./fixtures.js";

const kernels: Kernel[] = [];
const clients: AntlerClient[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const k of kernels.splice(0)) await k.close();
  for (const p of children.splice(0)) await stopProcess(p);
  removeTempDirs();
});

async function kernelWith(config: unknown, cwd = tempDir()) {
  const kernel = await createTestKernel({ plugins: [{ plugin: mcpPlugin, config }], cwd, builtins: false });
  kernels.push(kernel);
  return { kernel, catalog: kernel.scope.resolve(MCP_TOOLS), cwd };
}

async function mcpToolNames(kernel: Kernel, threadId = "t1"): Promise<string[]> {
  const entries = await kernel.assembleTools({ context: { thread_id: threadId, user_id: "u1" } });
  return entries.filter((e) => e.source === "mcp").map((e) => e.tool.name);
}

function livePids(catalog: McpToolCatalog, server: string): number[] {
  return (catalog.status().servers.find((s) => s.name === server)?.sessions ?? []).flatMap((s) => (s.pid === null ? [] : [s.pid]));
}

describe("@antler/plugin-mcp with server-everything", () => {
  it("lists every tool over stdio with the everything_ prefix, only once tools are assembled", async () => {
    const { kernel, catalog } = await kernelWith({ servers: { everything: everythingStdio() } });
    expect(catalog.status().servers[0]).toMatchObject({ name: "everything", state: "idle", starts: 0 });
    const names = await mcpToolNames(kernel);
    expect(names).toEqual(expect.arrayContaining(["everything_echo", "everything_get-sum"]));
    expect(names.length).toBeGreaterThanOrEqual(10);
    for (const n of names) expect(n).toMatch(/^everything_[a-zA-Z0-9_-]+$/);
    expect(catalog.status().servers[0]).toMatchObject({ state: "ready", toolCount: names.length, starts: 1, lastError: null });
  });

  it("lists the same tools over streamable HTTP", async () => {
    const http = await startEverythingHttp();
    children.push(http.child);
    const { kernel, catalog } = await kernelWith({ servers: { everything: { transport: "http", url: http.url } } });
    const names = await mcpToolNames(kernel);
    expect(catalog.status().servers[0]?.lastError).toBeNull();
    expect(names).toEqual(expect.arrayContaining(["everything_echo", "everything_get-sum"]));
    for (const n of names) expect(n.startsWith("everything_")).toBe(true);
    expect(catalog.status().servers[0]).toMatchObject({ transport: "http", state: "ready", toolCount: names.length });
  });

  it("skips MCP entirely when includeMcp is false (no server started)", async () => {
    const { kernel, catalog } = await kernelWith({ servers: { everything: everythingStdio() } });
    const entries = await kernel.assembleTools({ includeMcp: false, context: { thread_id: "t1" } });
    expect(entries.filter((e) => e.source === "mcp")).toEqual([]);
    expect(catalog.status().servers[0]?.starts).toBe(0);
  });

  it("an agent run calls everything_echo and everything_get-sum and gets their real results", async () => {
    const scripted = scriptedModelsPlugin({
      m: [
        {
          id: "ai-1",
          toolCalls: [
            { name: "everything_echo", args: { message: "hello from antler" }, id: "call-echo" },
            { name: "everything_get-sum", args: { a: 19, b: 23 }, id: "call-sum" },
          ],
        },
        { id: "ai-2", text: "done" },
      ],
    });
    const cwd = tempDir();
    const client = await AntlerClient.create({
      config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
      plugins: [scripted, { plugin: mcpPlugin, config: { servers: { everything: everythingStdio() } } }],
      cwd,
      env: {},
      discover: false,
    });
    clients.push(client);
    const events: StreamEvent[] = [];
    for await (const e of client.stream("echo and add", { threadId: "agent-thread" })) events.push(e);
    const toolMessages = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "tool" ? [e.data] : []));
    expect(toolMessages.map((m) => [m.tool_call_id, m.status, m.content])).toEqual([
      ["call-echo", "success", "Echo: hello from antler"],
      ["call-sum", "success", "The sum of 19 and 23 is 42."],
    ]);
    // The stdio server ran in the thread's workspace (its TMPDIR lives there).
    const workspace = join(cwd, ".antler", "users", "default", "threads", "agent-thread", "user-data", "workspace");
    expect(readdirSync(workspace)).toContain(".mcp");
  });

  it("reloads extensions_config.json only when it changes: a new server's tools appear, an untouched file is not re-read", async () => {
    const cwd = tempDir();
    const file = join(cwd, "extensions_config.json");
    const server = { command: process.execPath, args: [EVERYTHING, "stdio"] };
    writeFileSync(file, JSON.stringify({ mcpServers: { everything: server } }));
    const { kernel, catalog } = await kernelWith({ extensions_config: "extensions_config.json" }, cwd);

    const first = await mcpToolNames(kernel);
    expect(first).toContain("everything_echo");
    expect(first.some((n) => n.startsWith("second_"))).toBe(false);
    await mcpToolNames(kernel);
    await mcpToolNames(kernel);
    expect(catalog.status().extensionsConfig?.loads).toBe(1);
    expect(catalog.status().servers.find((s) => s.name === "everything")?.starts).toBe(1);

    writeFileSync(file, JSON.stringify({ mcpServers: { everything: server, second: { ...server, enabled: true } } }));
    const after = await mcpToolNames(kernel);
    expect(after).toEqual(expect.arrayContaining(["everything_echo", "second_echo", "second_get-sum"]));
    expect(catalog.status().extensionsConfig?.loads).toBe(2);
    // The unchanged server keeps its session; only the new one starts.
    expect(catalog.status().servers.map((s) => [s.name, s.starts])).toEqual([
      ["everything", 1],
      ["second", 1],
    ]);
  });

  it("a stdio server killed mid-call gives one clear error, and the next call reconnects", async () => {
    const { kernel, catalog } = await kernelWith({ servers: { everything: everythingStdio() } });
    const entries = await kernel.assembleTools({ context: { thread_id: "t1", user_id: "u1" } });
    const tool = (name: string) => {
      const found = entries.find((e) => e.tool.name === name)?.tool;
      if (!found) throw new Error(`no tool ${name}`);
      return found;
    };
    const config = { context: { thread_id: "t1", user_id: "u1" } };
    const [pid] = livePids(catalog, "everything");
    expect(pid).toBeTypeOf("number");

    const pending = tool("everything_trigger-long-running-operation").invoke({ duration: 30, steps: 30 }, config);
    await new Promise((r) => setTimeout(r, 300));
    process.kill(pid as number, "SIGKILL");
    await expect(pending).rejects.toThrow(
      /^MCP server everything exited during everything_trigger-long-running-operation: .*; it will be restarted on the next call$/,
    );
    expect(catalog.status().servers[0]?.lastError).toMatch(/exited during/);

    const again = await tool("everything_echo").invoke({ message: "back" }, config);
    expect(again).toBe("Echo: back");
    const [newPid] = livePids(catalog, "everything");
    expect(newPid).not.toBe(pid);
    expect(alive(pid as number)).toBe(false);
    expect(catalog.status().servers[0]?.starts).toBe(2);
  });

  it("cuts a tool result over result_max_chars, so one call cannot flood the model's context", async () => {
    const { kernel } = await kernelWith({ servers: { everything: { ...everythingStdio(), result_max_chars: 1000 } } });
    const context = { thread_id: "t1", user_id: "u1" };
    const echo = (await kernel.assembleTools({ context })).find((e) => e.tool.name === "everything_echo")?.tool;
    const long = `start ${"word ".repeat(2000)}end`;
    const result = String(await echo?.invoke({ message: long }, { context }));
    expect(result.startsWith("Echo: start")).toBe(true);
    expect(result.endsWith("end")).toBe(true);
    expect(result).toMatch(/\[… \d+ characters of this tool result omitted \(result_max_chars: 1000\) …\]/);
    expect(result.length).toBeLessThan(1200);
  });

  it("a server with a bad command is reported in status and the others still provide tools", async () => {
    const { kernel, catalog } = await kernelWith({
      servers: {
        broken: { transport: "stdio", command: join(tempDir(), "no-such-mcp-server"), init_timeout_seconds: 5 },
        everything: everythingStdio(),
      },
    });
    const names = await mcpToolNames(kernel);
    expect(names).toContain("everything_echo");
    expect(names.some((n) => n.startsWith("broken_"))).toBe(false);
    const broken = catalog.status().servers.find((s) => s.name === "broken");
    expect(broken).toMatchObject({ state: "failed", toolCount: 0 });
    expect(broken?.lastError).toMatch(/MCP server broken is unavailable: .*ENOENT/);
    expect(catalog.status().servers.find((s) => s.name === "everything")?.state).toBe("ready");
  });

  it("kernel close stops every stdio server process", async () => {
    const { kernel, catalog } = await kernelWith({ servers: { everything: everythingStdio() } });
    await mcpToolNames(kernel, "a");
    await mcpToolNames(kernel, "b");
    const pids = livePids(catalog, "everything");
    expect(pids).toHaveLength(1);
    await kernel.close();
    // A stopped child lingers until it is reaped; give a loaded machine time for that.
    const deadline = Date.now() + 20_000;
    while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });

  describe("stdio session housekeeping", () => {
    const call = async (kernel: Kernel, threadId: string, name: string, args: Record<string, unknown>) => {
      const context = { thread_id: threadId, user_id: "u1" };
      const entries = await kernel.assembleTools({ context });
      const tool = entries.find((e) => e.tool.name === name)?.tool;
      if (!tool) throw new Error(`no tool ${name}`);
      return tool.invoke(args, { context });
    };
    const threadsOf = (catalog: McpToolCatalog) =>
      (catalog.status().servers.find((s) => s.name === "everything")?.sessions ?? []).map((s) => s.threadId).sort();
    async function until(probe: () => boolean, what: string) {
      const deadline = Date.now() + 20_000;
      while (!probe()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    it("closes a session idle for idle_seconds, never one in the middle of a call, and the next call starts a new process", async () => {
      const { kernel, catalog } = await kernelWith({ servers: { everything: everythingStdio() }, stdio_sessions: { idle_seconds: 0.3 } });
      // A 2 s call outlives several idle periods: the session is busy, so it is left alone.
      expect(String(await call(kernel, "t1", "everything_trigger-long-running-operation", { duration: 2, steps: 2 }))).toMatch(
        /completed/i,
      );
      const [pid] = livePids(catalog, "everything");
      expect(pid).toBeTypeOf("number");
      expect(catalog.status().servers[0]?.starts).toBe(1);
      await until(() => livePids(catalog, "everything").length === 0 && !alive(pid as number), "the idle session to close");
      expect(await call(kernel, "t1", "everything_echo", { message: "again" })).toBe("Echo: again");
      expect(catalog.status().servers[0]?.starts).toBe(2);
    });

    it("past max_stdio_sessions, closes the least recently used idle session to start a new one", async () => {
      const { kernel, catalog } = await kernelWith({
        servers: { everything: everythingStdio() },
        stdio_sessions: { max_stdio_sessions: 2 },
      });
      await call(kernel, "t1", "everything_echo", { message: "one" });
      await call(kernel, "t2", "everything_echo", { message: "two" });
      await call(kernel, "t1", "everything_echo", { message: "one again" });
      expect(threadsOf(catalog)).toEqual(["t1", "t2"]);
      await call(kernel, "t3", "everything_echo", { message: "three" });
      // t2 was used least recently.
      expect(threadsOf(catalog)).toEqual(["t1", "t3"]);
    });
  });
});
