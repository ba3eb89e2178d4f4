// Two Antler distributions, each a real `antler serve` child process (the compiled CLI, SQLite, its own
// OpenAI-compatible model server on loopback): the caller's lead agent calls the other distribution over A2A with
// `invoke_a2a_agent`, and one trace id runs through both processes' logs and both run records.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AntlerServe,
  antlerCliBuilt,
  loopbackModelConfig,
  type OpenAICompatibleServer,
  startAntlerServe,
  startOpenAICompatibleServer,
} from "@antler/kernel/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const dists = {
  a2a: resolve(here, "../dist/index.js"),
  gateway: resolve(here, "../../gateway/dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && antlerCliBuilt();
const CALLER_KEY = "caller-key-0123456789abcdef";
const DESK_KEY = "desk-key-0123456789abcdef01";
const TRACE_ID = "two-distributions-trace-0001";

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
  return "";
}

function configLines(modelUrl: string, key: string, extra: string[]): string {
  return [
    ...loopbackModelConfig(modelUrl),
    "logging:",
    "  level: info",
    "  enhance: { enabled: true }",
    "plugins:",
    `  - path: ${JSON.stringify(dists.openai)}`,
    `  - path: ${JSON.stringify(dists.gateway)}`,
    "    config:",
    "      auth:",
    "        api_keys:",
    `          - { key: ${key}, user: peer }`,
    `  - path: ${JSON.stringify(dists.a2a)}`,
    ...extra,
    "",
  ].join("\n");
}

describe.skipIf(!built)("two Antler distributions over A2A (two `antler serve` processes; needs a build first)", () => {
  const dirs: string[] = [];
  let deskModel: OpenAICompatibleServer;
  let callerModel: OpenAICompatibleServer;
  let desk: AntlerServe;
  let caller: AntlerServe;

  beforeAll(async () => {
    deskModel = await startOpenAICompatibleServer({
      handler: (body) => {
        const text = textOf(body.messages.at(-1)?.content);
        return text.includes("sleep long") ? { text: "too late", delayMs: 60_000 } : { text: `Desk answer to: ${text}` };
      },
    });
    // The caller's lead: calls the desk with the user's text, then reports what came back.
    callerModel = await startOpenAICompatibleServer({
      handler: (body) => {
        const last = body.messages.at(-1);
        if (last?.role === "tool") return { text: `The desk said: ${textOf(last.content)}` };
        return { toolCalls: [{ name: "invoke_a2a_agent", args: { agent: "desk", message: textOf(last?.content) } }] };
      },
    });
    const deskDir = mkdtempSync(join(tmpdir(), "antler-a2a-desk-"));
    const callerDir = mkdtempSync(join(tmpdir(), "antler-a2a-caller-"));
    dirs.push(deskDir, callerDir);
    writeFileSync(join(deskDir, "config.yaml"), configLines(deskModel.url, DESK_KEY, ["    config:", "      server: { name: Desk }"]));
    desk = await startAntlerServe({ cwd: deskDir });
    writeFileSync(
      join(callerDir, "config.yaml"),
      configLines(callerModel.url, CALLER_KEY, [
        "    config:",
        "      server: { enabled: false }",
        "a2a_agents:",
        "  - name: desk",
        `    card_url: ${desk.url}`,
        "    auth: { value_env: DESK_KEY }",
        "    allow_private_addresses: true",
        "    timeout_seconds: 60",
      ]),
    );
    caller = await startAntlerServe({ cwd: callerDir, env: { DESK_KEY } });
  }, 120_000);

  afterAll(async () => {
    await caller?.stop();
    await desk?.stop();
    await callerModel?.close();
    await deskModel?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const call = (base: string, key: string, path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(init.headers as Record<string, string>) },
    });

  type Runs = { runs: Array<{ trace_id: string; status: string; run_id: string }> };
  const deskRunsOf = async (): Promise<Runs["runs"]> => {
    const { threads } = (await (await call(desk.url, DESK_KEY, "/api/threads")).json()) as { threads: Array<{ thread_id: string }> };
    const all = await Promise.all(
      threads.map(async (t) => ((await (await call(desk.url, DESK_KEY, `/api/threads/${t.thread_id}/runs`)).json()) as Runs).runs),
    );
    return all.flat();
  };

  it("the caller's run calls the desk over A2A, and one trace id is in both processes' logs and both run records", async () => {
    const thread = (await (await call(caller.url, CALLER_KEY, "/api/threads", { method: "POST", body: "{}" })).json()) as {
      thread_id: string;
    };
    const answer = await call(caller.url, CALLER_KEY, `/api/threads/${thread.thread_id}/runs/wait`, {
      method: "POST",
      headers: { "x-trace-id": TRACE_ID },
      body: JSON.stringify({ message: "Which platform for Lyon?" }),
    });
    expect(answer.status).toBe(200);
    expect(JSON.stringify(await answer.json())).toContain("The desk said: Desk answer to: Which platform for Lyon?");

    // The caller's run record.
    const callerRuns = (await (await call(caller.url, CALLER_KEY, `/api/threads/${thread.thread_id}/runs`)).json()) as {
      runs: Array<{ trace_id: string; status: string }>;
    };
    expect(callerRuns.runs).toEqual([expect.objectContaining({ trace_id: TRACE_ID, status: "success" })]);

    // The desk's run record: the one run the A2A task started there.
    expect(await deskRunsOf()).toEqual([expect.objectContaining({ trace_id: TRACE_ID, status: "success" })]);

    // Both processes' logs name the trace id.
    const traced = (output: string) => output.split("\n").filter((line) => line.includes(TRACE_ID));
    expect(traced(caller.output).some((line) => line.includes("remote A2A agent desk"))).toBe(true);
    expect(traced(desk.output).some((line) => line.includes("A2A task") && line.includes("started"))).toBe(true);
  });

  it("cancelling the caller's run cancels the desk's task (and so its run)", async () => {
    const traceId = "two-distributions-cancel-0002";
    const thread = (await (await call(caller.url, CALLER_KEY, "/api/threads", { method: "POST", body: "{}" })).json()) as {
      thread_id: string;
    };
    const dropped = new AbortController();
    // runs/wait cancels its run when the caller goes away (on_disconnect: cancel, the default).
    const waiting = call(caller.url, CALLER_KEY, `/api/threads/${thread.thread_id}/runs/wait`, {
      method: "POST",
      headers: { "x-trace-id": traceId },
      body: JSON.stringify({ message: "sleep long please" }),
      signal: dropped.signal,
    }).catch(() => undefined);
    const deskRun = async () => (await deskRunsOf()).find((r) => r.trace_id === traceId);
    for (let i = 0; i < 300 && (await deskRun())?.status !== "running"; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await deskRun())?.status).toBe("running");
    dropped.abort();
    await waiting;
    for (let i = 0; i < 300 && (await deskRun())?.status === "running"; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await deskRun())?.status).toBe("cancelled");
    const callerRuns = (await (await call(caller.url, CALLER_KEY, `/api/threads/${thread.thread_id}/runs`)).json()) as Runs;
    expect(callerRuns.runs).toEqual([expect.objectContaining({ trace_id: traceId, status: "cancelled" })]);
  });
});
