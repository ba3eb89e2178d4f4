import { useTempDirs } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import metricsPlugin from "@antler/plugin-metrics";
import { type AntlerClient, type RunRecord, runRecordSchema, runWaitResponseSchema } from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import { approvalClient, callThenReport, type Ledger } from "./approval-fixtures.js";

const temp = useTempDirs();
const ALICE_KEY = "alice-key-0123456789abcdef";
const MALLORY_KEY = "mallory-key-0123456789abcd";

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

async function serve(calls: Parameters<typeof callThenReport>[0]) {
  const ledger: Ledger = [];
  const { client } = await approvalClient({
    dir: temp.tempDir("antler-approval-gw-"),
    ledger,
    script: callThenReport(calls),
    plugins: [metricsPlugin],
  });
  closing.push(() => client.close());
  const gateway: RunningGateway = await startGateway({
    client,
    config: {
      port: 0,
      auth: {
        mode: "api_keys",
        api_keys: [
          { key: ALICE_KEY, user: "alice" },
          { key: MALLORY_KEY, user: "mallory" },
        ],
      },
    },
    shutdownGraceMs: 1000,
  });
  closing.push(() => gateway.close());
  const call = (key: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}${path}`, {
      method: json === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
  return { client: client as AntlerClient, ledger, call };
}

type WaitBody = {
  run_id: string;
  trace_id: string;
  status: string;
  interrupt?: { calls: Array<{ tool_call_id: string }> };
  output: string;
};
type ErrorBody = { error: { code: string; message: string; where?: string; hint?: string } };

async function pausedRun(call: Awaited<ReturnType<typeof serve>>["call"]) {
  await call(ALICE_KEY, "/api/threads", { thread_id: "t1" });
  const response = await call(ALICE_KEY, "/api/threads/t1/runs/wait", { message: "clean up" });
  expect(response.status).toBe(200);
  const body = (await response.json()) as WaitBody;
  expect(body.status).toBe("paused");
  return body;
}

const BASH = { name: "bash", args: { command: "rm -rf build" }, id: "call_bash" };

describe("POST /api/threads/{id}/runs/{run}/resume", () => {
  it("approves over HTTP: 200 with the same run and trace id, the tool ran once, and the run record lists success", async () => {
    const { call, ledger } = await serve([BASH]);
    const paused = await pausedRun(call);
    const listed = (await (await call(ALICE_KEY, "/api/threads/t1/runs")).json()) as { runs: RunRecord[] };
    // The documented shapes hold for a paused record and a paused wait answer.
    expect(runRecordSchema.parse(listed.runs[0])).toEqual(listed.runs[0]);
    expect(runWaitResponseSchema.safeParse(paused).success).toBe(true);
    expect(listed.runs[0]).toMatchObject({ run_id: paused.run_id, status: "paused", interrupt: { value: { kind: "approval" } } });
    const response = await call(ALICE_KEY, `/api/threads/t1/runs/${paused.run_id}/resume`, { decision: "approve" });
    expect(response.status).toBe(200);
    const body = (await response.json()) as WaitBody;
    expect(body).toMatchObject({ run_id: paused.run_id, trace_id: paused.trace_id, status: "success" });
    expect(ledger).toEqual([{ tool: "bash", args: { command: "rm -rf build" } }]);
    const record = (await (await call(ALICE_KEY, `/api/threads/t1/runs/${paused.run_id}`)).json()) as RunRecord;
    expect(record.status).toBe("success");
    // Not paused any more: 409 with its code, and nothing runs again.
    const again = await call(ALICE_KEY, `/api/threads/t1/runs/${paused.run_id}/resume`, { decision: "approve" });
    expect(again.status).toBe(409);
    expect(((await again.json()) as ErrorBody).error.code).toBe("ANTLER_ERR_RUN_NOT_PAUSED");
    expect(ledger).toHaveLength(1);
  });

  it("another user's resume is 404 (as if the run did not exist), an unknown run is 404, and the run stays paused", async () => {
    const { call, ledger } = await serve([BASH]);
    const paused = await pausedRun(call);
    const other = await call(MALLORY_KEY, `/api/threads/t1/runs/${paused.run_id}/resume`, { decision: "approve" });
    expect(other.status).toBe(404);
    const unknown = await call(ALICE_KEY, "/api/threads/t1/runs/no-such-run/resume", { decision: "approve" });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as ErrorBody).error.code).toBe("ANTLER_ERR_RUN_NOT_FOUND");
    expect(ledger).toEqual([]);
    const record = (await (await call(ALICE_KEY, `/api/threads/t1/runs/${paused.run_id}`)).json()) as RunRecord;
    expect(record.status).toBe("paused");
  });

  it("an edit the tool's schema refuses is 400 ANTLER_ERR_RESUME_INVALID naming the field; a later valid edit runs once", async () => {
    const { call, ledger } = await serve([BASH]);
    const paused = await pausedRun(call);
    const bad = await call(ALICE_KEY, `/api/threads/t1/runs/${paused.run_id}/resume`, { decision: "edit", args: { cmd: "ls" } });
    expect(bad.status).toBe(400);
    const error = ((await bad.json()) as ErrorBody).error;
    expect(error.code).toBe("ANTLER_ERR_RESUME_INVALID");
    expect(error.where).toBe("decisions.call_bash.args.command");
    expect(error.message).toContain("the edited arguments for bash do not fit its schema: command:");
    expect(ledger).toEqual([]);
    const good = await call(ALICE_KEY, `/api/threads/t1/runs/${paused.run_id}/resume`, { decision: "edit", args: { command: "ls" } });
    expect(good.status).toBe(200);
    expect(ledger).toEqual([{ tool: "bash", args: { command: "ls" } }]);
  });

  it("reject over HTTP: the model reads the reason, the tool never runs", async () => {
    const { call, ledger } = await serve([BASH]);
    const paused = await pausedRun(call);
    const response = await call(ALICE_KEY, `/api/threads/t1/runs/${paused.run_id}/resume`, { decision: "reject", reason: "use git clean" });
    expect(response.status).toBe(200);
    expect(((await response.json()) as WaitBody).output).toContain("a person rejected this call: use git clean");
    expect(ledger).toEqual([]);
  });

  it("the run's event log shows the pause, then the resumed part under the same run id, numbered on", async () => {
    const { call } = await serve([BASH]);
    const paused = await pausedRun(call);
    const first = parseSse(await (await call(ALICE_KEY, `/api/threads/t1/runs/${paused.run_id}/stream`)).text());
    const pauseEvent = first.find((e) => e.event === "custom" && (e.data as { type?: string }).type === "run_paused");
    expect(pauseEvent?.data).toMatchObject({ run_id: paused.run_id, trace_id: paused.trace_id, interrupt: { kind: "approval" } });
    const firstEnd = first.at(-1);
    expect(firstEnd).toMatchObject({ event: "end", data: { stop_reason: "paused" } });
    await call(ALICE_KEY, `/api/threads/t1/runs/${paused.run_id}/resume`, { decision: "approve" });
    // Following on from the pause's end (Last-Event-ID) reads the resumed part: no event lost, none repeated.
    const rest = parseSse(
      await (await fetchWithLastEventId(call, `/api/threads/t1/runs/${paused.run_id}/stream`, String(firstEnd?.id))).text(),
    );
    expect(rest[0]?.id).toBe((firstEnd?.id ?? 0) + 1);
    expect(rest.map((e) => e.id)).toEqual(rest.map((_, i) => (firstEnd?.id ?? 0) + 1 + i));
    const resumed = rest.find((e) => e.event === "custom" && (e.data as { type?: string }).type === "run_resumed");
    expect(resumed?.data).toMatchObject({ run_id: paused.run_id, trace_id: paused.trace_id, cause: "resume" });
    expect(rest.at(-1)).toMatchObject({ event: "end", data: { run_id: paused.run_id, trace_id: paused.trace_id } });
    expect((rest.at(-1)?.data as { stop_reason?: string | null } | undefined)?.stop_reason).not.toBe("paused");
  });

  it("/metrics shows how many runs are paused, counted from the database at the scrape", async () => {
    const { call } = await serve([BASH]);
    const pausedGauge = async () => {
      const text = await (await call(ALICE_KEY, "/metrics")).text();
      return Number(/^antler_runs_paused (\S+)$/m.exec(text)?.[1]);
    };
    expect(await pausedGauge()).toBe(0);
    const paused = await pausedRun(call);
    expect(await pausedGauge()).toBe(1);
    await call(ALICE_KEY, `/api/threads/t1/runs/${paused.run_id}/resume`, { decision: "reject" });
    expect(await pausedGauge()).toBe(0);
  });
});

function fetchWithLastEventId(call: Awaited<ReturnType<typeof serve>>["call"], path: string, lastEventId: string) {
  return call(ALICE_KEY, path, undefined, { "last-event-id": lastEventId });
}

function parseSse(text: string): Array<{ id: number | undefined; event: string; data: unknown }> {
  const out: Array<{ id: number | undefined; event: string; data: unknown }> = [];
  for (const block of text.split("\n\n")) {
    let id: number | undefined;
    let event = "message";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("id:")) id = Number(line.slice(3).trim());
      else if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trim());
    }
    if (data.length > 0) out.push({ id, event, data: JSON.parse(data.join("\n")) });
  }
  return out;
}
