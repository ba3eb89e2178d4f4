import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ErrorCodes, isAntlerError } from "@antler/kernel";
import type { ScriptFunction } from "@antler/kernel/testing";
import mcpPlugin, { McpConfigClient, mcpConfigResponseSchema } from "@antler/plugin-mcp";
import memoryPlugin, {
  factDeleteResponseSchema,
  factListResponseSchema,
  factSearchResponseSchema,
  MemoryClient,
  memoryConfigResponseSchema,
  memoryExportSchema,
  memoryFactSchema,
  memoryResponseSchema,
  memoryStatusResponseSchema,
} from "@antler/plugin-memory";
import {
  modelInfoSchema,
  modelsListResponseSchema,
  runCancelResponseSchema,
  runListResponseSchema,
  runRecordSchema,
  runWaitResponseSchema,
  type StreamEvent,
  streamEventSchema,
  threadDeleteResponseSchema,
  threadListResponseSchema,
  threadRecordSchema,
  threadStateSchema,
  uploadRecordSchema,
  uploadResponseSchema,
} from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { valuesFrameSchema } from "../src/index.js";
import { ALICE_KEY, collectSse, readSse, startTestGateway, tempDir } from "./fixtures.js";

/**
 * Parses `value` (after a JSON round trip, as it would cross HTTP) with `schema` and requires the parse to
 * keep every field: zod objects strip unknown keys, so a field the client returns but the schema does not
 * know fails here, and a missing required field fails the parse.
 */
function conforms<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const wire = JSON.parse(JSON.stringify(value)) as unknown;
  const parsed = schema.parse(wire);
  expect(parsed).toEqual(wire);
  return parsed;
}

const script: ScriptFunction = (messages) => {
  const last = messages.at(-1);
  if (last?.getType() === "tool") return { text: "Done.", usage: { input_tokens: 5, output_tokens: 1 } };
  const text = String(last?.content);
  if (text === "first") {
    return {
      text: "Writing.",
      toolCalls: [{ name: "write_report", args: { name: "r.md", text: "# r" } }],
      usage: { input_tokens: 3, output_tokens: 2 },
    };
  }
  if (text.startsWith("slow")) return { text: "never", delayMs: 60_000 };
  return { text: `ok: ${text}` };
};

describe("client–gateway conformance: every AntlerClient method's output parses with the gateway's response schema", () => {
  it("covers listModels, createThread, getThreadRecord, listThreads, stream, invoke, chat, getThread, uploadFile, getArtifact, listRuns, getRun, cancelRun, deleteThread — and the HTTP responses match", async () => {
    const gw = await startTestGateway({ script });
    const { client } = gw;
    const user = { userId: "alice" };
    const http = async (path: string, init?: Parameters<typeof gw.call>[1]) => (await gw.call(path, init)).json();

    // listModels
    conforms(modelsListResponseSchema, { models: await client.listModels(user) });
    for (const m of await client.listModels(user)) conforms(modelInfoSchema, m);
    expect(conforms(modelsListResponseSchema, await http("/api/models"))).toEqual(
      JSON.parse(JSON.stringify({ models: await client.listModels(user) })),
    );

    // createThread / getThreadRecord / listThreads
    const created = conforms(threadRecordSchema, await client.createThread({ threadId: "conf", metadata: { a: 1 }, ...user }));
    expect(conforms(threadRecordSchema, await client.getThreadRecord("conf", user))).toEqual(created);
    expect(conforms(threadRecordSchema, await http("/api/threads/conf"))).toEqual(created);
    conforms(threadListResponseSchema, { threads: await client.listThreads(user) });
    conforms(threadListResponseSchema, await http("/api/threads"));

    // stream: every event, and the same events over SSE
    const events: StreamEvent[] = [];
    for await (const event of client.stream("first", { threadId: "conf", ...user }))
      events.push(conforms(streamEventSchema, event) as StreamEvent);
    expect(events.map((e) => e.type)).toContain("end");
    const frames = await collectSse(await gw.call("/api/threads/conf/runs/stream", { method: "POST", json: { message: "second" } }));
    for (const frame of frames.slice(1)) {
      if (frame.event === "values") conforms(valuesFrameSchema, frame.data);
      else conforms(streamEventSchema, { type: frame.event, data: frame.data });
    }
    // ?values=full keeps the whole-state form for old clients.
    const full = await collectSse(
      await gw.call("/api/threads/conf/runs/stream?values=full", { method: "POST", json: { message: "second, whole" } }),
    );
    for (const frame of full.slice(1)) conforms(streamEventSchema, { type: frame.event, data: frame.data });

    // invoke (runs/wait) and chat
    const waited = conforms(runWaitResponseSchema, await client.invoke("third", { threadId: "conf", ...user, model: "m" }));
    expect(waited.output).toBe("ok: third");
    expect(
      conforms(runWaitResponseSchema, await http("/api/threads/conf/runs/wait", { method: "POST", json: { message: "fourth" } })).output,
    ).toBe("ok: fourth");
    // chat returns the same text `output` carries.
    expect(await client.chat("fifth", { threadId: "conf", ...user })).toBe("ok: fifth");

    // getThread (state)
    const state = conforms(threadStateSchema, await client.getThread("conf", user));
    expect(conforms(threadStateSchema, await http("/api/threads/conf/state"))).toEqual(JSON.parse(JSON.stringify(state)));

    // uploadFile
    const local = join(tempDir(), "notes.txt");
    writeFileSync(local, "hello");
    const uploaded = conforms(uploadRecordSchema, await client.uploadFile("conf", local, user));
    conforms(uploadResponseSchema, { files: [uploaded] });
    const form = new FormData();
    form.append("files", new Blob(["hello"]), "notes.txt");
    const overHttp = conforms(uploadResponseSchema, await http("/api/threads/conf/uploads", { method: "POST", body: form }));
    expect(Object.keys(overHttp.files[0] ?? {}).sort()).toEqual(Object.keys(uploaded).sort());

    // getArtifact: bytes and MIME type in process, the same bytes and Content-Type over HTTP
    const artifact = await client.getArtifact("conf", "/mnt/user-data/outputs/r.md", user);
    const response = await gw.call("/api/threads/conf/artifacts/mnt/user-data/outputs/r.md");
    expect(Buffer.from(await response.arrayBuffer())).toEqual(artifact.bytes);
    expect(response.headers.get("content-type")?.split(";")[0]).toBe(artifact.mimeType);
    expect(Number(response.headers.get("content-length"))).toBe(artifact.size);

    // listRuns / getRun
    const runs = conforms(runListResponseSchema, { runs: await client.listRuns("conf", user) });
    expect(runs.runs.length).toBeGreaterThanOrEqual(3);
    const first = runs.runs.at(-1) as z.output<typeof runRecordSchema>;
    conforms(runRecordSchema, await client.getRun("conf", first.run_id, user));
    expect(conforms(runListResponseSchema, await http("/api/threads/conf/runs"))).toEqual(JSON.parse(JSON.stringify(runs)));
    expect(conforms(runRecordSchema, await http(`/api/threads/conf/runs/${first.run_id}`))).toEqual(JSON.parse(JSON.stringify(first)));

    // cancelRun, in process and over HTTP
    const slow = client.stream("slow", { threadId: "conf", ...user })[Symbol.asyncIterator]();
    const pending = slow.next();
    await expect.poll(async () => (await client.listRuns("conf", user)).filter((r) => r.status === "running").length).toBe(1);
    const live = (await client.listRuns("conf", user)).find((r) => r.status === "running") as z.output<typeof runRecordSchema>;
    conforms(runCancelResponseSchema, await client.cancelRun("conf", live.run_id, user));
    await slow.next().catch(() => undefined);
    await pending;
    const slowHttp = await gw.call("/api/threads/conf/runs/stream", { method: "POST", json: { message: "slow again" } });
    const sse = readSse(slowHttp);
    const meta = (await sse.next()).value?.data as { run_id: string };
    await expect.poll(async () => (await client.getRun("conf", meta.run_id, user).catch(() => null))?.status).toBe("running");
    conforms(runCancelResponseSchema, await http(`/api/threads/conf/runs/${meta.run_id}/cancel`, { method: "POST" }));
    for await (const _ of { [Symbol.asyncIterator]: () => sse });

    // deleteThread
    conforms(threadDeleteResponseSchema, await client.deleteThread("conf", user));
    await client.createThread({ threadId: "conf2", ...user });
    conforms(threadDeleteResponseSchema, await http("/api/threads/conf2", { method: "DELETE" }));
  });

  it("covers getModel (and its 404) and McpConfigClient: getConfig, updateConfig, resetCache — and the HTTP responses match", async () => {
    const file = join(tempDir(), "extensions_config.json");
    writeFileSync(file, JSON.stringify({ mcpServers: {} }));
    const gw = await startTestGateway({
      script,
      plugins: [{ plugin: mcpPlugin, config: { extensions_config: file } }],
      config: {
        auth: {
          mode: "api_keys",
          api_keys: [{ key: ALICE_KEY, user: "alice" }],
          admins: ["alice"],
        },
      },
    });
    const http = async (path: string, init?: Parameters<typeof gw.call>[1]) => (await gw.call(path, init)).json();
    const wire = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

    // getModel: the entry listModels lists, in process and over HTTP; an unknown name is MODEL_NOT_FOUND, a 404 over HTTP.
    const model = conforms(modelInfoSchema, await gw.client.getModel("m", { userId: "alice" }));
    expect(model).toEqual(wire((await gw.client.listModels({ userId: "alice" })).find((m) => m.name === "m")));
    expect(conforms(modelInfoSchema, await http("/api/models/m"))).toEqual(model);
    const missing = await gw.client.getModel("nope", { userId: "alice" }).catch((e: unknown) => e);
    expect(isAntlerError(missing, ErrorCodes.MODEL_NOT_FOUND)).toBe(true);
    const missingHttp = await gw.call("/api/models/nope");
    expect(missingHttp.status).toBe(404);
    expect(((await missingHttp.json()) as { error: { code: string } }).error.code).toBe(ErrorCodes.MODEL_NOT_FOUND);

    // McpConfigClient
    const mcp = new McpConfigClient(gw.client);
    expect(conforms(mcpConfigResponseSchema, await http("/api/mcp/config"))).toEqual(
      conforms(mcpConfigResponseSchema, await mcp.getConfig()),
    );
    const update = { mcpServers: { a: { type: "stdio", command: "node", args: ["a.js"] } } };
    const inProcess = conforms(mcpConfigResponseSchema, await mcp.updateConfig(update));
    const overHttp = conforms(mcpConfigResponseSchema, await http("/api/mcp/config", { method: "PUT", json: update }));
    expect(overHttp).toEqual(inProcess);
    expect(await http("/api/mcp/cache/reset", { method: "POST" })).toEqual(wire(await mcp.resetCache()));
  });

  it("covers MemoryClient: getMemory, createFact, getFact, listFacts, searchMemory, updateFact, exportMemory, importMemory, getMemoryConfig, getMemoryStatus, deleteFact, clearMemory — and the HTTP responses match", async () => {
    // The memory plugin is not a gateway dependency (it depends on the gateway): the root workspace provides it to this test.
    const gw = await startTestGateway({ script, plugins: [memoryPlugin] });
    const memory = new MemoryClient(gw.client, { userId: "alice" });
    const http = async (path: string, init?: Parameters<typeof gw.call>[1]) => (await gw.call(path, init)).json();
    const wire = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

    conforms(memoryResponseSchema, await memory.getMemory());
    const created = conforms(memoryFactSchema, await memory.createFact({ content: "Writes TypeScript", category: "preference" }));
    const overHttp = conforms(memoryFactSchema, await http("/api/memory/facts", { method: "POST", json: { content: "Runs marathons" } }));
    expect(Object.keys(overHttp).sort()).toEqual(Object.keys(created).sort());
    expect(conforms(memoryFactSchema, await http(`/api/memory/facts/${created.id}`))).toEqual(
      conforms(memoryFactSchema, await memory.getFact(created.id)),
    );
    expect(conforms(factListResponseSchema, await http("/api/memory/facts"))).toEqual(wire(await memory.listFacts()));
    conforms(factListResponseSchema, await memory.listFacts());
    expect(conforms(factSearchResponseSchema, await http("/api/memory/facts?query=typescript"))).toEqual(
      wire(conforms(factSearchResponseSchema, await memory.searchMemory("typescript"))),
    );
    conforms(memoryFactSchema, await memory.updateFact(created.id, { confidence: 0.9 }));
    conforms(memoryFactSchema, await http(`/api/memory/facts/${created.id}`, { method: "PATCH", json: { confidence: 0.95 } }));
    expect(conforms(memoryResponseSchema, await http("/api/memory"))).toEqual(wire(await memory.getMemory()));
    const exported = conforms(memoryExportSchema, await memory.exportMemory());
    const { exported_at: _at, ...httpExport } = conforms(memoryExportSchema, await http("/api/memory/export"));
    expect(httpExport).toEqual(wire({ ...exported, exported_at: undefined }));
    conforms(memoryResponseSchema, await memory.importMemory(exported, { userId: "bob" }));
    conforms(memoryResponseSchema, await http("/api/memory/import", { method: "POST", json: exported }));
    expect(conforms(memoryConfigResponseSchema, await http("/api/memory/config"))).toEqual(
      conforms(memoryConfigResponseSchema, memory.getMemoryConfig()),
    );
    expect(conforms(memoryStatusResponseSchema, await http("/api/memory/status"))).toEqual(
      conforms(memoryStatusResponseSchema, await memory.getMemoryStatus()),
    );
    conforms(factDeleteResponseSchema, await memory.deleteFact(created.id));
    conforms(factDeleteResponseSchema, await http(`/api/memory/facts/${overHttp.id}`, { method: "DELETE" }));
    conforms(memoryResponseSchema, await memory.clearMemory({ userId: "bob" }));
    expect(conforms(memoryResponseSchema, await http("/api/memory", { method: "DELETE" })).facts).toEqual([]);
  });
});
