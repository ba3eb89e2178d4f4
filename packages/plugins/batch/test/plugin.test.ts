import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { type CliIO, ErrorCodes, ensureTraceContext, type Kernel, TRACE_METADATA_KEY } from "@antler/kernel";
import { createTestKernel } from "@antler/kernel/testing";
import { startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import subagentsPlugin from "@antler/plugin-subagents";
import { afterEach, describe, expect, it } from "vitest";
import batchPlugin, { BATCH_SERVICE, BatchErrorCodes, type BatchPluginConfigInput, type BatchStatus } from "../src/index.js";
import { stubRunnerPlugin } from "../src/testing/index.js";
import { sleep } from "./fixtures.js";

const kernels: Kernel[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((k) => k.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function bootKernel(options: { batch?: boolean; config?: BatchPluginConfigInput; sleepMs?: number } = {}) {
  const cwd = mkdtempSync(join(tmpdir(), "antler-batch-"));
  dirs.push(cwd);
  const plugins = [
    subagentsPlugin,
    { plugin: stubRunnerPlugin, config: { sleep_ms: options.sleepMs ?? 5 } },
    ...(options.batch === false ? [] : [{ plugin: batchPlugin, config: { worker: { poll_ms: 20 }, ...options.config } }]),
  ];
  const kernel = await createTestKernel({ builtins: true, plugins, cwd });
  kernels.push(kernel);
  return { kernel, cwd };
}

async function batchTools(kernel: Kernel, subagentEnabled = true) {
  const entries = await kernel.assembleTools({ subagentEnabled });
  return Object.fromEntries(entries.filter((e) => e.plugin === "@antler/plugin-batch").map((e) => [e.tool.name, e.tool]));
}

async function call(
  kernel: Kernel,
  name: string,
  args: Record<string, unknown>,
  user = "alice",
): Promise<{ text: string; status: string }> {
  const tool = (await batchTools(kernel))[name];
  if (!tool) throw new Error(`${name} is not assembled`);
  const out = (await tool.invoke(args, { context: { user_id: user, thread_id: "thread-1" } })) as { content: unknown; status?: string };
  return { text: String(out.content), status: out.status ?? "success" };
}

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${i}`, prompt: `do ${i}` }));
const batchIdOf = (text: string) => /batch_[0-9a-f]{32}/.exec(text)?.[0] as string;

async function waitForState(kernel: Kernel, batchId: string, user = "alice"): Promise<BatchStatus> {
  const client = await kernel.scope.resolve(BATCH_SERVICE).client(user);
  for (let i = 0; i < 500; i++) {
    const status = await client.status(batchId);
    if (status.state !== "active") return status;
    await sleep(20);
  }
  throw new Error("batch did not finish");
}

function cliIO(kernel: Kernel): CliIO & { out: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let text = "";
  stdout.on("data", (chunk) => {
    text += String(chunk);
  });
  stderr.resume();
  return { stdout, stderr, cwd: kernel.paths.configDir, env: {}, kernel, out: () => text };
}

function command(kernel: Kernel, name: string) {
  const found = kernel.commands.find((c) => c.name === name);
  if (!found) throw new Error(`no command ${name}`);
  return found;
}

describe("@antler/plugin-batch", () => {
  it("adds batch_task, batch_status and cancel_batch only for agents that may delegate", async () => {
    const { kernel } = await bootKernel();
    expect(Object.keys(await batchTools(kernel, true)).sort()).toEqual(["batch_status", "batch_task", "cancel_batch"]);
    expect(Object.keys(await batchTools(kernel, false))).toEqual([]);
  });

  it("adds no batch tools when the plugin is not installed", async () => {
    const { kernel } = await bootKernel({ batch: false });
    const names = (await kernel.assembleTools({ subagentEnabled: true })).map((e) => e.tool.name);
    expect(names).not.toContain("batch_task");
    expect(names).not.toContain("batch_status");
  });

  it("refuses to boot without @antler/plugin-subagents", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "antler-batch-"));
    dirs.push(cwd);
    await expect(createTestKernel({ builtins: true, plugins: [batchPlugin], cwd })).rejects.toMatchObject({
      code: ErrorCodes.PLUGIN_MISSING_DEPENDENCY,
    });
  });

  it("batch_task returns a batch id at once, and the embedded worker runs the items in SQLite under base_dir", async () => {
    const { kernel, cwd } = await bootKernel({ sleepMs: 20 });
    const reply = await call(kernel, "batch_task", { title: "twenty", items: items(20), subagent_type: "general-purpose" });
    expect(reply.status).toBe("success");
    const batchId = batchIdOf(reply.text);
    expect(batchId).toBeDefined();
    // 20 items × 20 ms on 3 admission slots take well over 100 ms; the tool answered before they all ran.
    const atReply = await (await kernel.scope.resolve(BATCH_SERVICE).client("alice")).status(batchId);
    expect(atReply.counts.completed).toBeLessThan(20);
    expect(reply.text).toContain("antler batch export");
    const status = await waitForState(kernel, batchId);
    expect(status.counts.completed).toBe(20);
    expect(existsSync(join(cwd, ".antler", "data", "antler.sqlite"))).toBe(true);
    const text = (await call(kernel, "batch_status", { batch_id: batchId })).text;
    expect(text).toContain("completed, 20/20 items finished");
    expect(text).toContain("Acceptance (separate from execution)");
    // Results stay out of the lead's context.
    expect(text).not.toContain("stub answer");
  });

  it("batch_task stamps the trace id its run context carries, else the ambient one", async () => {
    const { kernel } = await bootKernel({ config: { worker: { embedded: false } } });
    const tool = (await batchTools(kernel)).batch_task;
    const submit = (context: Record<string, unknown>) =>
      tool?.invoke({ title: "traced", items: items(1), subagent_type: "general-purpose" }, { context });
    await ensureTraceContext("ambient-trace", () =>
      submit({ user_id: "alice", thread_id: "thread-1", [TRACE_METADATA_KEY]: "carried-trace" }),
    );
    await ensureTraceContext("ambient-trace", () => submit({ user_id: "alice", thread_id: "thread-1" }));
    const batches = await (await kernel.scope.resolve(BATCH_SERVICE).client("alice")).list();
    expect(batches.map((b) => b.traceId).sort()).toEqual(["ambient-trace", "carried-trace"]);
  });

  it("gives another user's batch_status and cancel_batch 'not found', and leaves the batch untouched", async () => {
    const { kernel } = await bootKernel({ sleepMs: 2_000, config: { worker: { embedded: false } } });
    const batchId = batchIdOf(
      (await call(kernel, "batch_task", { title: "mine", items: items(3), subagent_type: "general-purpose" })).text,
    );
    const status = await call(kernel, "batch_status", { batch_id: batchId }, "bob");
    const cancel = await call(kernel, "cancel_batch", { batch_id: batchId }, "bob");
    const unknown = await call(kernel, "batch_status", { batch_id: "batch_00000000000000000000000000000000" }, "bob");
    for (const reply of [status, cancel]) {
      expect(reply.status).toBe("error");
      expect(reply.text).toContain(`batch "${batchId}" not found`);
    }
    // Indistinguishable from a batch that does not exist.
    expect(unknown.text.replace(/batch_[0-9a-f]{32}/, "ID")).toBe(status.text.replace(/batch_[0-9a-f]{32}/, "ID"));
    const owner = await kernel.scope.resolve(BATCH_SERVICE).client("alice");
    expect((await owner.status(batchId)).counts.pending).toBe(3);
    // The CLI acts for one user too.
    const io = cliIO(kernel);
    await expect(command(kernel, "batch cancel").run([batchId, "--user", "bob"], io)).rejects.toMatchObject({
      code: BatchErrorCodes.NOT_FOUND,
    });
    await expect(command(kernel, "batch status").run([batchId, "--user", "bob"], io)).rejects.toMatchObject({
      code: BatchErrorCodes.NOT_FOUND,
    });
    // The owner's cancel works.
    expect((await call(kernel, "cancel_batch", { batch_id: batchId })).text).toContain("3 pending or running item(s) stopped");
  });

  it("batch_task refuses a bad submission, naming the item, and stores nothing", async () => {
    const { kernel } = await bootKernel();
    const reply = await call(kernel, "batch_task", {
      title: "bad",
      items: [
        { key: "a", prompt: "x" },
        { key: "a", prompt: "y" },
      ],
      subagent_type: "nope",
    });
    expect(reply.status).toBe("error");
    expect(reply.text).toContain('items[1] (key "a"): duplicate key');
    expect(reply.text).toMatch(/unknown subagent_type "nope"; available types: .*general-purpose/);
    expect(await (await kernel.scope.resolve(BATCH_SERVICE).client("alice")).list()).toEqual([]);
  });

  it("antler batch status --watch prints plain progress lines when stdout is not a TTY, and batch export writes JSONL", async () => {
    const { kernel } = await bootKernel({ sleepMs: 10 });
    const batchId = batchIdOf(
      (await call(kernel, "batch_task", { title: "watch", items: items(30), subagent_type: "general-purpose" })).text,
    );
    const io = cliIO(kernel);
    expect(await command(kernel, "batch status").run([batchId, "--user", "alice", "--watch", "--interval", "20"], io)).toBe(0);
    const lines = io.out().trim().split("\n");
    expect(lines.at(-1)).toBe(`batch ${batchId} completed`);
    expect(lines.some((l) => l.startsWith(`${batchId} completed 100% 30/30 done`))).toBe(true);
    expect(io.out()).not.toContain("\r");
    const exportIO = cliIO(kernel);
    expect(await command(kernel, "batch export").run([batchId, "--user", "alice"], exportIO)).toBe(0);
    const records = exportIO
      .out()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { key: string; state: string; result: string });
    expect(records).toHaveLength(30);
    expect(records[0]).toMatchObject({ key: "k0", state: "completed", result: "stub answer to: do 0" });
  });

  it("antler batch status --watch redraws one progress bar in place on a TTY", async () => {
    const { kernel } = await bootKernel({ sleepMs: 10 });
    const batchId = batchIdOf(
      (await call(kernel, "batch_task", { title: "tty", items: items(20), subagent_type: "general-purpose" })).text,
    );
    const io = cliIO(kernel);
    Object.assign(io.stdout, { isTTY: true });
    expect(await command(kernel, "batch status").run([batchId, "--user", "alice", "--watch", "--interval", "20"], io)).toBe(0);
    const out = io.out();
    expect(out).toContain("\r\x1b[2K[");
    expect(out).toContain(`[${"█".repeat(30)}] 100% 20/20 done`);
    // Redrawn in place: one line of bar output, then the final summary line.
    expect(out.trim().split("\n")).toHaveLength(2);
  });
});

describe("@antler/plugin-batch under antler serve", () => {
  it("a serving gateway runs the batches a previous process left pending, with no batch tool call", async () => {
    const first = await bootKernel();
    const service = first.kernel.scope.resolve(BATCH_SERVICE);
    // Submitted without starting a worker, then the process goes away with every item still pending.
    const batch = await (await service.client("alice")).submit({ title: "left over", subagent_type: "general-purpose", items: items(6) });
    await first.kernel.close();
    kernels.splice(kernels.indexOf(first.kernel), 1);

    const kernel = await createTestKernel({
      builtins: true,
      plugins: [
        subagentsPlugin,
        { plugin: stubRunnerPlugin, config: { sleep_ms: 5 } },
        { plugin: batchPlugin, config: { worker: { poll_ms: 20 } } },
      ],
      cwd: first.cwd,
    });
    kernels.push(kernel);
    const gateway = await startGateway({ client: new AntlerClient({ kernel }), config: { port: 0 }, shutdownGraceMs: 500 });
    try {
      const status = await waitForState(kernel, batch.id);
      expect(status.counts.completed).toBe(6);
    } finally {
      await gateway.close();
    }
  });
});
