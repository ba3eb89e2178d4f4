import { ErrorCodes } from "@antler/kernel";
import { RuntimeErrorCodes } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import { GatewayErrorCodes } from "../src/errors.js";
import { parseGatewayConfig } from "../src/server.js";
import { BOB_KEY, type SseFrame, startTestGateway, type TestGateway } from "./fixtures.js";
import { ANSWER, folded, ids, readFrames, socketDropper, tickerTools, tickingScript } from "./run-stream-fixtures.js";

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function gatewayWithTicker(options: Parameters<typeof startTestGateway>[0] = {}): Promise<TestGateway> {
  return startTestGateway({ script: tickingScript(8, 5), plugins: [tickerTools], ...options });
}

async function newThread(gw: TestGateway, threadId: string): Promise<void> {
  expect((await gw.call("/api/threads", { method: "POST", json: { thread_id: threadId } })).status).toBe(201);
}

async function streamRun(gw: TestGateway, threadId: string, body: Record<string, unknown> = {}) {
  const response = await gw.call(`/api/threads/${threadId}/runs/stream`, { method: "POST", json: { message: "tick", ...body } });
  expect(response.status).toBe(200);
  return { runId: response.headers.get("x-run-id") as string, response };
}

function join(gw: TestGateway, threadId: string, runId: string, init: { lastEventId?: string; query?: string; key?: string } = {}) {
  const headers: Record<string, string> = init.lastEventId === undefined ? {} : { "last-event-id": init.lastEventId };
  return gw.call(`/api/threads/${threadId}/runs/${runId}/stream${init.query ?? ""}`, { headers, ...(init.key ? { key: init.key } : {}) });
}

async function joinedFrames(gw: TestGateway, threadId: string, runId: string, init: Parameters<typeof join>[3] = {}): Promise<SseFrame[]> {
  const response = await join(gw, threadId, runId, init);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  const { frames, error } = await readFrames(response);
  expect(error).toBeUndefined();
  return frames;
}

async function waitForStatus(gw: TestGateway, threadId: string, runId: string, status: string): Promise<void> {
  await expect
    .poll(async () => ((await (await gw.call(`/api/threads/${threadId}/runs/${runId}`)).json()) as { status: string }).status, {
      timeout: 10_000,
    })
    .toBe(status);
}

describe("run stream ids and joining a run (GET /api/threads/{id}/runs/{run}/stream)", () => {
  it("numbers every frame of a run stream from 1 (the metadata frame), and a join of the finished run replays the same frames", async () => {
    const gw = await gatewayWithTicker();
    await newThread(gw, "t-ids");
    const { runId, response } = await streamRun(gw, "t-ids");
    const { frames } = await readFrames(response);
    expect(frames[0]).toMatchObject({ event: "metadata", id: "1", data: { run_id: runId, thread_id: "t-ids" } });
    expect(ids(frames)).toEqual(range(1, frames.length));
    expect(frames.filter((f) => f.event === "custom")).toHaveLength(8);
    expect(frames.at(-1)).toMatchObject({ event: "end", data: { run_id: runId } });
    const joined = await joinedFrames(gw, "t-ids", runId);
    // The same frames, but the join's first values frame is a snapshot where the run's own stream had a patch.
    expect(joined.map((f) => [f.id, f.event])).toEqual(frames.map((f) => [f.id, f.event]));
    const values = joined.filter((f) => f.event === "values");
    expect(Object.keys(values[0]?.data as object)).toEqual(["snapshot"]);
    expect(values.slice(1).every((f) => Object.keys(f.data as object)[0] === "patch")).toBe(true);
    expect(folded(joined)).toEqual(folded(frames));
  });

  it("Last-Event-ID (header) and last_event_id (query) give exactly the events after that id", async () => {
    const gw = await gatewayWithTicker();
    await newThread(gw, "t-after");
    const { runId, response } = await streamRun(gw, "t-after");
    const { frames } = await readFrames(response);
    // Compared as the states a client holds: a resume's first values frame is a snapshot.
    const states = folded(frames);
    expect(folded(await joinedFrames(gw, "t-after", runId, { lastEventId: "7" }))).toEqual(states.slice(7));
    expect(folded(await joinedFrames(gw, "t-after", runId, { query: "?last_event_id=3" }))).toEqual(states.slice(3));
    // The header wins over the query when both are sent (EventSource sends the header on reconnect).
    expect(folded(await joinedFrames(gw, "t-after", runId, { lastEventId: "10", query: "?last_event_id=2" }))).toEqual(states.slice(10));
    // ?values=full: every values frame the whole state, as before the delta form.
    const full = await joinedFrames(gw, "t-after", runId, { query: "?values=full" });
    expect(full.filter((f) => f.event === "values").map((f) => f.data)).toEqual(
      states.filter((f) => f.event === "values").map((f) => f.data),
    );
  });

  it("answers 204 for the id of a finished run's last event, and 400 for an id past it or one that is not a number", async () => {
    const gw = await gatewayWithTicker();
    await newThread(gw, "t-edge");
    const { runId, response } = await streamRun(gw, "t-edge");
    const { frames } = await readFrames(response);
    const last = frames.length;
    expect((await join(gw, "t-edge", runId, { lastEventId: String(last) })).status).toBe(204);
    const past = await join(gw, "t-edge", runId, { lastEventId: String(last + 1) });
    expect(past.status).toBe(400);
    expect(((await past.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: GatewayErrorCodes.INVALID_REQUEST,
      message: `Last-Event-ID ${last + 1} is past the last event of run ${runId} (${last})`,
    });
    for (const bad of ["abc", "-1", "1.5"]) {
      const answer = await join(gw, "t-edge", runId, { lastEventId: bad });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { error: { hint: string } }).error.hint).toContain("id:");
    }
  });

  it("another user's run is 404 on the join route, exactly like a run that does not exist", async () => {
    const gw = await gatewayWithTicker();
    await newThread(gw, "t-private");
    const { runId, response } = await streamRun(gw, "t-private");
    await readFrames(response);
    const bobs = await join(gw, "t-private", runId, { key: BOB_KEY });
    expect(bobs.status).toBe(404);
    expect(((await bobs.json()) as { error: { code: string } }).error.code).toBe(RuntimeErrorCodes.RUN_NOT_FOUND);
    const missing = await join(gw, "t-private", "no-such-run", { key: BOB_KEY });
    expect(missing.status).toBe(404);
    // Nor can bob reach it through his own thread of the same name.
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-private" }, key: BOB_KEY });
    expect((await join(gw, "t-private", runId, { key: BOB_KEY })).status).toBe(404);
  });

  it("a join while the run is live on this instance follows it from memory to its end: the same frames as its own stream", async () => {
    const gw = await startTestGateway({ script: tickingScript(20, 20), plugins: [tickerTools] });
    await newThread(gw, "t-live");
    const { runId, response } = await streamRun(gw, "t-live");
    const own = readFrames(response);
    await expect.poll(() => gw.runEvents?.lastSeq(runId) ?? 0).toBeGreaterThan(3);
    const joined = await joinedFrames(gw, "t-live", runId);
    const { frames } = await own;
    expect(frames.at(-1)?.event).toBe("end");
    expect(folded(joined)).toEqual(folded(frames));
  });

  it("by default a client that drops cancels its run, and the logged run ends with a RUN_CANCELLED error frame", async () => {
    const gw = await startTestGateway({ script: tickingScript(40, 20), plugins: [tickerTools] });
    await newThread(gw, "t-drop-cancel");
    const dropper = socketDropper(gw, "/runs/stream");
    const { runId, response } = await streamRun(gw, "t-drop-cancel");
    const read = await readFrames(response, (_frame, index) => {
      if (index === 5) dropper.drop();
    });
    expect(read.error).toBeDefined();
    await waitForStatus(gw, "t-drop-cancel", runId, "cancelled");
    const frames = await joinedFrames(gw, "t-drop-cancel", runId);
    expect(ids(frames)).toEqual(range(1, frames.length));
    expect(frames.at(-1)).toMatchObject({ event: "error", data: { code: ErrorCodes.RUN_CANCELLED, run_id: runId } });
    expect(frames.some((f) => f.event === "end")).toBe(false);
  });

  it('with on_disconnect "continue" a dropped run finishes, and Last-Event-ID resumes it with no event lost or repeated', async () => {
    const gw = await startTestGateway({ script: tickingScript(40, 15), plugins: [tickerTools] });
    await newThread(gw, "t-drop-continue");
    const dropper = socketDropper(gw, "/runs/stream");
    const { runId, response } = await streamRun(gw, "t-drop-continue", { on_disconnect: "continue" });
    const before = await readFrames(response, (_frame, index) => {
      if (index === 5) dropper.drop();
    });
    expect(before.error).toBeDefined();
    const lastId = before.frames.at(-1)?.id as string;
    const after = await joinedFrames(gw, "t-drop-continue", runId, { lastEventId: lastId });
    const all = [...before.frames, ...after];
    expect(ids(all)).toEqual(range(1, all.length));
    expect(all.at(-1)?.event).toBe("end");
    expect(all.filter((f) => f.event === "custom")).toHaveLength(40);
    await waitForStatus(gw, "t-drop-continue", runId, "success");
    const state = (await (await gw.call("/api/threads/t-drop-continue/state")).json()) as { messages: Array<{ content: string }> };
    expect(state.messages.at(-1)?.content).toBe(ANSWER);
  });

  it("runs of runs/wait and of the in-process client under the gateway are logged and can be joined", async () => {
    const gw = await gatewayWithTicker();
    await newThread(gw, "t-wait");
    const waited = await gw.call("/api/threads/t-wait/runs/wait", { method: "POST", json: { message: "tick" } });
    expect(waited.status).toBe(200);
    const waitRun = waited.headers.get("x-run-id") as string;
    const frames = await joinedFrames(gw, "t-wait", waitRun);
    expect(frames[0]).toMatchObject({ event: "metadata", id: "1", data: { run_id: waitRun } });
    expect(frames.at(-1)).toMatchObject({ event: "end", data: { run_id: waitRun } });

    const result = await gw.client.invoke("tick", { threadId: "t-wait", userId: "alice" });
    const inProcess = await joinedFrames(gw, "t-wait", result.run_id);
    expect(ids(inProcess)).toEqual(range(1, inProcess.length));
    expect(inProcess.at(-1)).toMatchObject({ event: "end", data: { run_id: result.run_id } });
  });

  it("a finished run leaves no bookkeeping in memory: streamed, waited for, or cancelled by a client that dropped", async () => {
    const gw = await gatewayWithTicker();
    await newThread(gw, "t-forget");
    const streamed = await streamRun(gw, "t-forget");
    expect((await readFrames(streamed.response)).frames.at(-1)?.event).toBe("end");
    expect((await gw.call("/api/threads/t-forget/runs/wait", { method: "POST", json: { message: "tick" } })).status).toBe(200);
    const dropper = socketDropper(gw, "/runs/stream");
    const dropped = await streamRun(gw, "t-forget");
    await readFrames(dropped.response, (_frame, index) => {
      if (index === 2) dropper.drop();
    });
    await waitForStatus(gw, "t-forget", dropped.runId, "cancelled");
    await gw.runEvents?.idle();
    expect(gw.client.activeRuns).toBe(0);
    expect(gw.runEvents?.liveRuns).toBe(0);
    expect(gw.runEvents?.lastSeq(streamed.runId)).toBe(0);
    expect(gw.runEvents?.lastSeq(dropped.runId)).toBe(0);
    // What they logged is still there for joiners, from the store.
    expect((await joinedFrames(gw, "t-forget", streamed.runId)).at(-1)?.event).toBe("end");
  });

  it("the retention sweep deletes events older than retention_hours; joining the run then is a coded 410, never a partial stream", async () => {
    const gw = await gatewayWithTicker({ config: { run_events: { retention_hours: 1 } } });
    await newThread(gw, "t-retention");
    const { runId, response } = await streamRun(gw, "t-retention");
    await readFrames(response);
    expect(await gw.runEvents?.sweep(Date.now())).toBe(0);
    expect((await join(gw, "t-retention", runId)).status).toBe(200);
    expect(await gw.runEvents?.sweep(Date.now() + 2 * 3_600_000)).toBeGreaterThan(10);
    const gone = await join(gw, "t-retention", runId);
    expect(gone.status).toBe(410);
    const body = (await gone.json()) as { error: { code: string; message: string; hint: string } };
    expect(body.error.code).toBe(GatewayErrorCodes.RUN_EVENTS_EXPIRED);
    expect(body.error.hint).toContain("/state");
    // The run's record is still there: only its events went.
    expect((await gw.call(`/api/threads/t-retention/runs/${runId}`)).status).toBe(200);
  });

  it("max_events_per_run keeps a run's newest events: joining from before them is 410, from within them gets the rest", async () => {
    const gw = await startTestGateway({
      script: tickingScript(30, 1),
      plugins: [tickerTools],
      config: { run_events: { max_events_per_run: 16 } },
    });
    await newThread(gw, "t-cap");
    const { runId, response } = await streamRun(gw, "t-cap");
    const { frames } = await readFrames(response);
    expect(frames.length).toBeGreaterThan(16);
    const fromStart = await join(gw, "t-cap", runId);
    expect(fromStart.status).toBe(410);
    expect(((await fromStart.json()) as { error: { message: string } }).error.message).toContain(
      `events 1–${frames.length - 16} were pruned`,
    );
    // From within them: the frames up to the next values frame, which needs a snapshot built from the run's
    // first patches, gone with the trim; so the stream ends with a coded error instead of a wrong state.
    const lastId = frames.length - 5;
    const resumed = await joinedFrames(gw, "t-cap", runId, { lastEventId: String(lastId) });
    const valuesAt = frames.findIndex((f, i) => i >= lastId && f.event === "values");
    expect(resumed.slice(0, -1)).toEqual(frames.slice(lastId, valuesAt));
    expect(resumed.at(-1)).toMatchObject({ event: "error", data: { code: GatewayErrorCodes.RUN_EVENTS_EXPIRED } });
    expect(resumed.at(-1)?.id).toBeUndefined();
    // A resume after the last values frame needs no snapshot and gets the rest.
    const afterValues = frames.findLastIndex((f) => f.event === "values") + 1;
    expect(await joinedFrames(gw, "t-cap", runId, { lastEventId: String(afterValues) })).toEqual(frames.slice(afterValues));
  });

  it("with stream_bridge none the frames still carry ids, and a join is a coded 404 naming the setting", async () => {
    const gw = await gatewayWithTicker({ config: { stream_bridge: "none" } });
    await newThread(gw, "t-none");
    const { runId, response } = await streamRun(gw, "t-none");
    const { frames } = await readFrames(response);
    expect(ids(frames)).toEqual(range(1, frames.length));
    const answer = await join(gw, "t-none", runId);
    expect(answer.status).toBe(404);
    const body = (await answer.json()) as { error: { code: string; hint: string } };
    expect(body.error.code).toBe(GatewayErrorCodes.RUN_EVENTS_DISABLED);
    expect(body.error.hint).toContain("stream_bridge");
  });

  it("refuses stream_bridge redis without a URL, naming the setting to add", () => {
    expect(() => parseGatewayConfig({ stream_bridge: { type: "redis" } as never })).toThrow(/redis_url/);
    expect(parseGatewayConfig({ stream_bridge: "sql" }).stream_bridge).toEqual({ type: "sql" });
  });
});
