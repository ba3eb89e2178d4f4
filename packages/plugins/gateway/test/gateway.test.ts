import type { ScriptedStep } from "@antler/kernel/testing";
import {
  endEventSchema,
  runListResponseSchema,
  runMetadataEventSchema,
  streamEventSchema,
  threadRecordSchema,
  threadStateSchema,
  uploadResponseSchema,
} from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
// The runtime's document builders: real PDFs written by the test itself.
import { pdfWithPages } from "../../runtime/test/documents.js";
import { applyValuesFrame, type ValuesFrame, type ValuesState, valuesFrameSchema } from "../src/index.js";
import { collectSse, readSse, startTestGateway } from "./fixtures.js";

const reportScript: ScriptedStep[] = [
  {
    id: "ai-1",
    text: "Writing it.",
    toolCalls: [{ name: "write_report", args: { name: "report.md", text: "# Q3\nup 4%" }, id: "call-1" }],
  },
  { id: "ai-2", text: "The report is at /mnt/user-data/outputs/report.md.", usage: { input_tokens: 12, output_tokens: 9 } },
];

describe("HTTP end to end with fetch", () => {
  it("creates a thread, streams a run over SSE, and the run and state are readable afterwards", async () => {
    const gw = await startTestGateway({ script: reportScript });
    const created = await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-1", metadata: { topic: "q3" } } });
    expect(created.status).toBe(201);
    const thread = threadRecordSchema.parse(await created.json());
    expect(thread).toMatchObject({ thread_id: "t-1", user_id: "alice", metadata: { topic: "q3" } });

    const response = await gw.call("/api/threads/t-1/runs/stream", {
      method: "POST",
      json: { input: { messages: [{ role: "user", content: "Write the Q3 report" }] } },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const runId = response.headers.get("x-run-id");
    const frames = await collectSse(response);

    const [first, ...rest] = frames;
    expect(first?.event).toBe("metadata");
    const meta = runMetadataEventSchema.parse(first?.data);
    expect(meta.run_id).toBe(runId);
    expect(meta.trace_id).toBe(response.headers.get("x-trace-id"));
    // Every later frame is a StreamEvent of the embedded client, its type in `event:`; values frames are patches.
    for (const frame of rest) {
      if (frame.event === "values") valuesFrameSchema.parse(frame.data);
      else streamEventSchema.parse({ type: frame.event, data: frame.data });
    }
    // Applied to the thread as it was (empty), the patches give the state GET /state has afterwards.
    let folded: ValuesState | undefined;
    for (const frame of rest) if (frame.event === "values") folded = applyValuesFrame(folded, frame.data as ValuesFrame);
    const saved = threadStateSchema.parse(await (await gw.call("/api/threads/t-1/state")).json());
    expect(folded?.messages).toEqual(saved.messages);
    const tuples = rest.filter((f) => f.event === "messages-tuple").map((f) => f.data as Record<string, unknown>);
    expect(tuples.filter((t) => t.type === "tool").map((t) => t.name)).toEqual(["write_report"]);
    expect(tuples.some((t) => Array.isArray(t.tool_calls))).toBe(true);
    const end = endEventSchema.shape.data.parse(rest.at(-1)?.data);
    expect(rest.at(-1)?.event).toBe("end");
    expect(end).toMatchObject({ run_id: runId, thread_id: "t-1", trace_id: meta.trace_id, usage: { input_tokens: 12, output_tokens: 9 } });

    const runs = runListResponseSchema.parse(await (await gw.call("/api/threads/t-1/runs")).json());
    expect(runs.runs).toHaveLength(1);
    expect(runs.runs[0]).toMatchObject({
      run_id: runId,
      status: "success",
      trace_id: meta.trace_id,
      kwargs: { input: "Write the Q3 report" },
    });

    const state = threadStateSchema.parse(await (await gw.call("/api/threads/t-1/state")).json());
    expect(state.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
  });

  it("fetches an artifact the run wrote, with its MIME type and nosniff", async () => {
    const gw = await startTestGateway({ script: reportScript });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-art" } });
    await collectSse(await gw.call("/api/threads/t-art/runs/stream", { method: "POST", json: { message: "report please" } }));
    const artifact = await gw.call("/api/threads/t-art/artifacts/mnt/user-data/outputs/report.md");
    expect(artifact.status).toBe(200);
    expect(artifact.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(artifact.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await artifact.text()).toBe("# Q3\nup 4%");
    const missing = await gw.call("/api/threads/t-art/artifacts/mnt/user-data/outputs/nope.md");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_ARTIFACT_NOT_FOUND");
  });

  it("uploads files as multipart; the agent sees them and they are served back as artifacts", async () => {
    const gw = await startTestGateway({
      script: (messages) => ({ text: `I see: ${String(messages.at(-1)?.content).includes("notes.txt") ? "notes.txt" : "nothing"}` }),
    });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-up" } });
    const form = new FormData();
    form.append("files", new Blob(["meeting notes"], { type: "text/plain" }), "notes.txt");
    form.append("files", new Blob(["a,b\n1,2\n"], { type: "text/csv" }), "data.csv");
    const uploaded = await gw.call("/api/threads/t-up/uploads", { method: "POST", body: form });
    expect(uploaded.status).toBe(201);
    const body = uploadResponseSchema.parse(await uploaded.json());
    expect(body.files.map((f) => [f.filename, f.virtual_path, f.size])).toEqual([
      ["notes.txt", "/mnt/user-data/uploads/notes.txt", 13],
      ["data.csv", "/mnt/user-data/uploads/data.csv", 8],
    ]);
    const back = await gw.call("/api/threads/t-up/artifacts/mnt/user-data/uploads/notes.txt");
    expect(await back.text()).toBe("meeting notes");
    const result = await gw.call("/api/threads/t-up/runs/wait", { method: "POST", json: { message: "what did I upload?" } });
    expect(((await result.json()) as { output: string }).output).toBe("I see: notes.txt");
  });

  it("answers an upload with each document's Markdown copy, or a note and still 201 for a broken one", async () => {
    const gw = await startTestGateway({
      kernelConfig: { uploads: { auto_convert_documents: true } },
      script: (messages) => ({ text: String(messages.at(-1)?.content) }),
    });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-doc" } });
    const form = new FormData();
    form.append("files", new Blob([pdfWithPages(["Revenue grew"])], { type: "application/pdf" }), "report.pdf");
    form.append("files", new Blob(["not a zip"]), "broken.docx");
    const uploaded = await gw.call("/api/threads/t-doc/uploads", { method: "POST", body: form });
    expect(uploaded.status).toBe(201);
    const [pdf, docx] = uploadResponseSchema.parse(await uploaded.json()).files;
    expect(pdf?.markdown?.virtual_path).toBe("/mnt/user-data/uploads/report.pdf.md");
    expect(docx?.conversion_note).toMatch(/could not be read as a Word document/);
    const markdown = await gw.call("/api/threads/t-doc/artifacts/mnt/user-data/uploads/report.pdf.md");
    expect(await markdown.text()).toContain("Revenue grew");
    const result = await gw.call("/api/threads/t-doc/runs/wait", { method: "POST", json: { message: "read them" } });
    const note = ((await result.json()) as { output: string }).output;
    expect(note).toContain("Markdown: /mnt/user-data/uploads/report.pdf.md");
    expect(note).toMatch(/broken\.docx \(\d+ bytes\); not converted to Markdown/);
  });

  it("cancels a live run through its AbortSignal: the stream ends with RUN_CANCELLED and the record says cancelled", async () => {
    const gw = await startTestGateway({ script: [{ text: "never said", delayMs: 60_000 }] });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-cancel" } });
    const response = await gw.call("/api/threads/t-cancel/runs/stream", { method: "POST", json: { message: "take your time" } });
    const frames = readSse(response);
    const first = await frames.next();
    const runId = (first.value?.data as { run_id: string } | undefined)?.run_id as string;
    // Wait until the run is recorded as running (the model call is in flight).
    await expect
      .poll(async () => ((await (await gw.call("/api/threads/t-cancel/runs")).json()) as { runs: unknown[] }).runs.length)
      .toBe(1);
    const started = Date.now();
    const cancel = await gw.call(`/api/threads/t-cancel/runs/${runId}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(200);
    expect(await cancel.json()).toEqual({ run_id: runId, thread_id: "t-cancel", status: "cancelled" });
    const rest: Array<{ event: string; data: unknown }> = [];
    for await (const frame of { [Symbol.asyncIterator]: () => frames }) rest.push(frame);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(rest.at(-1)).toMatchObject({ event: "error", data: { code: "ANTLER_ERR_RUN_CANCELLED", run_id: runId } });
    expect(rest.some((f) => f.event === "end")).toBe(false);
    const again = await gw.call(`/api/threads/t-cancel/runs/${runId}/cancel`, { method: "POST" });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { message: string } }).error.message).toContain("already ended with status cancelled");
  });

  it("a client that disconnects mid-stream cancels its run", async () => {
    const gw = await startTestGateway({ script: [{ text: "slow", delayMs: 60_000 }] });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-drop" } });
    const controller = new AbortController();
    const response = await gw.call("/api/threads/t-drop/runs/stream", {
      method: "POST",
      json: { message: "hi" },
      signal: controller.signal,
    });
    const frames = readSse(response);
    await frames.next();
    await expect.poll(() => gw.client.activeRuns).toBe(1);
    controller.abort();
    await expect.poll(() => gw.client.activeRuns, { timeout: 5000 }).toBe(0);
    const runs = (await (await gw.call("/api/threads/t-drop/runs")).json()) as { runs: Array<{ status: string }> };
    expect(runs.runs[0]?.status).toBe("cancelled");
  });

  it("runs/wait returns the final text, values and usage; DELETE removes the thread, its runs and files", async () => {
    const gw = await startTestGateway({ script: reportScript });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-wait" } });
    const response = await gw.call("/api/threads/t-wait/runs/wait", { method: "POST", json: { message: "go" } });
    expect(response.status).toBe(200);
    const result = (await response.json()) as { output: string; status: string; values: { messages: unknown[] } };
    expect(result.output).toBe("The report is at /mnt/user-data/outputs/report.md.");
    expect(result.values.messages).toHaveLength(4);
    const deleted = await gw.call("/api/threads/t-wait", { method: "DELETE" });
    expect(await deleted.json()).toEqual({ thread_id: "t-wait", deleted: true });
    expect((await gw.call("/api/threads/t-wait")).status).toBe(404);
    expect((await gw.call("/api/threads/t-wait/artifacts/mnt/user-data/outputs/report.md")).status).toBe(404);
    // The same id can be created afresh, with no history.
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-wait" } });
    const state = (await (await gw.call("/api/threads/t-wait/state")).json()) as { messages: unknown[] };
    expect(state.messages).toEqual([]);
    const runs = (await (await gw.call("/api/threads/t-wait/runs")).json()) as { runs: unknown[] };
    expect(runs.runs).toEqual([]);
  });

  it("sends keep-alive comments while a run is quiet", async () => {
    const gw = await startTestGateway({ script: [{ text: "after a pause", delayMs: 400 }], config: { sse_keepalive_seconds: 0.1 } });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-quiet" } });
    const raw = await (await gw.call("/api/threads/t-quiet/runs/stream", { method: "POST", json: { message: "hi" } })).text();
    expect(raw).toContain(": keep-alive\n\n");
    expect(raw).toContain("event: end\n");
  });

  for (const mode of ["hand_over", "cancel"] as const) {
    it(`closing the gateway with runs.on_shutdown ${mode}: open streams end with ${mode === "cancel" ? "RUN_CANCELLED and the records say cancelled" : "RUN_HANDED_OVER and the records stay running, for another instance"}`, async () => {
      const gw = await startTestGateway({
        script: [{ text: "never", delayMs: 60_000 }],
        ...(mode === "cancel" ? { config: { runs: { on_shutdown: "cancel" } } } : {}),
      });
      await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-shutdown" } });
      const response = await gw.call("/api/threads/t-shutdown/runs/stream", { method: "POST", json: { message: "hi" } });
      const frames = readSse(response);
      await frames.next();
      await expect.poll(() => gw.client.activeRuns).toBe(1);
      const closing = gw.close();
      const rest: Array<{ event: string; data: unknown }> = [];
      for await (const frame of { [Symbol.asyncIterator]: () => frames }) rest.push(frame);
      await closing;
      const code = mode === "cancel" ? "ANTLER_ERR_RUN_CANCELLED" : "ANTLER_ERR_RUN_HANDED_OVER";
      expect(rest.at(-1)).toMatchObject({ event: "error", data: { code } });
      expect(gw.client.activeRuns).toBe(0);
      const runs = await gw.client.listRuns("t-shutdown", { userId: "alice" });
      expect(runs.map((r) => r.status)).toEqual([mode === "cancel" ? "cancelled" : "running"]);
      await expect(fetch(`${gw.url}/health`)).rejects.toThrow();
    });
  }

  it("GET /health needs no key; GET /api/models lists models without secrets", async () => {
    const gw = await startTestGateway();
    const health = await gw.call("/health", { key: null });
    expect(await health.json()).toMatchObject({ status: "ok" });
    const models = (await (await gw.call("/api/models")).json()) as { models: Array<Record<string, unknown>> };
    expect(models.models).toEqual([{ name: "m", provider: "scripted", supportsVision: false, supportsThinking: false }]);
  });
});
