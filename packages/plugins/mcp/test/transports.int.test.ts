import type { ChildProcess } from "node:child_process";
import { ensureTraceContext, type Kernel } from "@antler/kernel";
import { createTestKernel, runKernelCommand } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import mcpPlugin, { MCP_TOOLS } from "../src/index.js";
import {
  everythingStdio,
  META_ECHO_SERVER,
  type RecordingProxy,
  removeTempDirs,
  startEverythingHttp,
  startEverythingSse,
  startRecordingProxy,
  stopProcess,
  tempDir,
} from "./fixtures.js";

const kernels: Kernel[] = [];
const children: ChildProcess[] = [];
const proxies: RecordingProxy[] = [];

afterEach(async () => {
  for (const k of kernels.splice(0)) await k.close();
  for (const p of proxies.splice(0)) await p.close();
  for (const c of children.splice(0)) await stopProcess(c);
  removeTempDirs();
});

async function kernelWith(config: unknown, cwd = tempDir()) {
  const kernel = await createTestKernel({ plugins: [{ plugin: mcpPlugin, config }], cwd, builtins: false });
  kernels.push(kernel);
  return { kernel, catalog: kernel.scope.resolve(MCP_TOOLS) };
}

const context = { thread_id: "t1", user_id: "u1" };

async function mcpTool(kernel: Kernel, name: string) {
  const entries = await kernel.assembleTools({ context });
  const tool = entries.find((e) => e.tool.name === name)?.tool;
  if (!tool) throw new Error(`no tool ${name} in ${entries.map((e) => e.tool.name).join(", ")}`);
  return tool;
}

async function runCommand(kernel: Kernel, name: string, args: string[] = []): Promise<{ code: number; out: string }> {
  const { code, stdout } = await runKernelCommand(kernel, [...name.split(" "), ...args]);
  return { code, out: stdout };
}

describe("trace propagation", () => {
  it("every streamable HTTP request carries X-Trace-Id of the trace scope it was made in", async () => {
    const http = await startEverythingHttp();
    children.push(http.child);
    const proxy = await startRecordingProxy(http.url);
    proxies.push(proxy);
    const { kernel } = await kernelWith({ servers: { everything: { transport: "http", url: `${proxy.origin}/mcp` } } });

    const first = await ensureTraceContext("trace-http-1", async () => {
      const echo = await mcpTool(kernel, "everything_echo");
      return echo.invoke({ message: "one" }, { context });
    });
    expect(first).toBe("Echo: one");
    const during1 = proxy.requests.splice(0);
    expect(during1.filter((r) => r.method === "POST").length).toBeGreaterThanOrEqual(3); // initialize, initialized, list, call
    for (const r of during1) expect([r.method, r.headers["x-trace-id"]]).toEqual([r.method, "trace-http-1"]);

    // The session is shared, but the id is read per request, not fixed at connect time.
    const second = await ensureTraceContext("trace-http-2", async () =>
      (await mcpTool(kernel, "everything_echo")).invoke({ message: "two" }, { context }),
    );
    expect(second).toBe("Echo: two");
    const posts = proxy.requests.filter((r) => r.method === "POST");
    expect(posts.length).toBeGreaterThanOrEqual(1);
    for (const r of posts) expect(r.headers["x-trace-id"]).toBe("trace-http-2");
  });

  it("stdio requests carry _meta['antler/trace_id'] of the bound trace", async () => {
    const { kernel } = await kernelWith({ servers: { meta: { transport: "stdio", command: process.execPath, args: [META_ECHO_SERVER] } } });
    const tool = await mcpTool(kernel, "meta_meta");
    const result = await ensureTraceContext("trace-stdio-1", () => tool.invoke({}, { context }));
    expect(JSON.parse(String(result))).toEqual({ "antler/trace_id": "trace-stdio-1" });
    const unbound = await tool.invoke({}, { context });
    expect(JSON.parse(String(unbound))).toBeNull();
  });
});

describe("legacy SSE transport", () => {
  it("lists server-everything's tools over SSE and calls one, with X-Trace-Id on the POSTs", async () => {
    const sse = await startEverythingSse();
    children.push(sse.child);
    const proxy = await startRecordingProxy(sse.url);
    proxies.push(proxy);
    const { kernel, catalog } = await kernelWith({ servers: { everything: { transport: "sse", url: `${proxy.origin}/sse` } } });
    const result = await ensureTraceContext("trace-sse-1", async () =>
      (await mcpTool(kernel, "everything_get-sum")).invoke({ a: 2, b: 3 }, { context }),
    );
    expect(result).toBe("The sum of 2 and 3 is 5.");
    expect(catalog.status().servers[0]).toMatchObject({ transport: "sse", state: "ready", lastError: null });
    expect(catalog.status().servers[0]?.toolCount).toBeGreaterThanOrEqual(10);
    expect(proxy.requests.some((r) => r.method === "GET" && r.path.startsWith("/sse"))).toBe(true);
    const posts = proxy.requests.filter((r) => r.method === "POST");
    expect(posts.length).toBeGreaterThanOrEqual(3);
    for (const r of posts) expect(r.headers["x-trace-id"]).toBe("trace-sse-1");
  });
});

describe("CLI commands", () => {
  it("`mcp status` starts each server to report it: tools of a working one, the error of a broken one, exit code 1", async () => {
    const { kernel } = await kernelWith({
      servers: {
        everything: everythingStdio(),
        broken: { transport: "stdio", command: "/nonexistent/mcp-server", init_timeout_seconds: 5 },
      },
    });
    expect(await runCommand(kernel, "mcp status", ["--no-probe"])).toEqual({
      code: 0,
      out: "everything [stdio, config] idle: 0 tools, 0 sessions, 0 starts\nbroken [stdio, config] idle: 0 tools, 0 sessions, 0 starts\n",
    });
    const probed = await runCommand(kernel, "mcp status");
    expect(probed.code).toBe(1);
    expect(probed.out).toMatch(/^everything \[stdio, config\] ready: \d+ tools, 1 sessions, 1 starts$/m);
    expect(probed.out).toMatch(
      /^broken \[stdio, config\] failed: 0 tools, 0 sessions, 1 starts\n {2}last error: MCP server broken is unavailable: .*ENOENT/m,
    );
  });

  it("`mcp reset` in one process makes another process on the same base_dir drop its sessions at its next assembly", async () => {
    const cwd = tempDir();
    const serving = await kernelWith({ servers: { everything: everythingStdio() } }, cwd);
    await mcpTool(serving.kernel, "everything_echo");
    expect(serving.catalog.status().servers[0]).toMatchObject({ state: "ready", starts: 1 });
    const [before] = serving.catalog.status().servers[0]?.sessions ?? [];

    // `antler mcp reset` is its own process with its own kernel; only the data folder is shared.
    const cli = await kernelWith({ servers: { everything: everythingStdio() } }, cwd);
    const reset = await runCommand(cli.kernel, "mcp reset");
    expect(reset.out).toContain("Running processes on this base_dir");

    await mcpTool(serving.kernel, "everything_echo");
    const after = serving.catalog.status().servers[0];
    expect(after).toMatchObject({ state: "ready", starts: 1 });
    expect(after?.sessions[0]?.pid).not.toBe(before?.pid);
    // Seen once: the next assembly does not reset again.
    await mcpTool(serving.kernel, "everything_echo");
    expect(serving.catalog.status().servers[0]?.sessions[0]?.pid).toBe(after?.sessions[0]?.pid);
  });

  it("`mcp status` prints each server's state and `mcp reset` closes sessions so the next assembly restarts them", async () => {
    const { kernel, catalog } = await kernelWith({ servers: { everything: everythingStdio() } });
    expect(await runCommand(kernel, "mcp status", ["--no-probe"])).toEqual({
      code: 0,
      out: "everything [stdio, config] idle: 0 tools, 0 sessions, 0 starts\n",
    });

    await mcpTool(kernel, "everything_echo");
    const count = catalog.status().servers[0]?.toolCount ?? 0;
    expect(count).toBeGreaterThanOrEqual(10);
    expect((await runCommand(kernel, "mcp status")).out).toBe(`everything [stdio, config] ready: ${count} tools, 1 sessions, 1 starts\n`);

    expect(await runCommand(kernel, "mcp reset")).toMatchObject({
      code: 0,
      out: expect.stringMatching(/^MCP tool cache cleared and sessions closed\./),
    });
    expect(catalog.status().servers[0]).toMatchObject({ state: "idle", starts: 0, sessions: [] });
    await mcpTool(kernel, "everything_echo");
    expect(catalog.status().servers[0]).toMatchObject({ state: "ready", starts: 1 });
  });
});
