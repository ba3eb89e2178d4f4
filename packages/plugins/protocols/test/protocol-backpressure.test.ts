// Backpressure, the same for every protocol's stream: a reader that stalls holds its run back (the body is pulled
// one frame at a time), and the run finishes with the protocol's own terminal frame once it reads again. A real
// gateway on loopback, SQLite storage, a scripted model that writes a few megabytes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import protocols from "../src/index.js";

const ALICE = "alice-key-0123456789abcdef";

const tickTool = definePlugin({
  name: "tick-tool",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(defineTool({ name: "tick", description: "Does nothing.", schema: z.object({ n: z.number() }), run: async () => "ok" }));
  },
});

/** This many model turns of FLOOD_TEXT each, a `tick` call between them; `floodCalls` counts the turns. */
// About 48 MB in all: more than loopback's socket buffers can ever hold (the tcp_rmem and tcp_wmem maxima, 32 + 4 MB
// on these machines), so a reader that stalls must hold the run back whatever the kernel autotunes them to.
const FLOOD_ROUNDS = 24;
const FLOOD_TEXT = `${"w".repeat(999)} `.repeat(2000);
let floodCalls = 0;

const script = (messages: BaseMessage[]) => {
  floodCalls += 1;
  const ticks = messages.filter((m) => m instanceof ToolMessage && m.name === "tick").length;
  return ticks < FLOOD_ROUNDS
    ? { text: FLOOD_TEXT, toolCalls: [{ id: `call-tick-${ticks}`, name: "tick", args: { n: ticks } }] }
    : { text: "Flood over." };
};

let dir: string;
let client: AntlerClient;
let gateway: RunningGateway;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "antler-protocol-backpressure-"));
  client = await AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      logging: { level: "warn" },
    },
    plugins: [scriptedModelsPlugin({ m: { respond: script } }), tickTool, protocols],
    cwd: dir,
    env: {},
    discover: false,
  });
  gateway = await startGateway({
    client,
    config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: ALICE, user: "alice" }] } },
    shutdownGraceMs: 500,
  });
});

// Closing waits for checkpoint retention of three ~48 MB threads: 7 s on a quiet machine, more under CI's load.
afterAll(async () => {
  await gateway?.close();
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
}, 120_000);

interface Protocol {
  name: string;
  path(threadId: string): string;
  body(threadId: string): unknown;
  /** How the stream's last text must end: the protocol's terminal frame. */
  ends: RegExp;
}

const PROTOCOLS: Protocol[] = [
  {
    name: "AI SDK",
    path: () => "/ai-sdk/chat",
    body: (threadId) => ({ id: threadId, messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "flood" }] }] }),
    ends: /"type":"finish"[^\n]*\n\ndata: \[DONE\]\n\n$/,
  },
  {
    name: "AG-UI",
    path: () => "/ag-ui",
    body: (threadId) => ({ threadId, runId: "r1", messages: [{ id: "u1", role: "user", content: "flood" }], tools: [], context: [] }),
    ends: /data: \{"type":"RUN_FINISHED"[^\n]*\n\n$/,
  },
  {
    name: "LangGraph",
    path: (threadId) => `/langgraph/threads/${threadId}/runs/stream`,
    body: () => ({
      assistant_id: "agent",
      input: { messages: [{ type: "human", content: "flood" }] },
      if_not_exists: "create",
      stream_mode: ["messages-tuple"],
    }),
    ends: /event: end\ndata: null\nid: \d+\n\n$/,
  },
];

describe("backpressure on every protocol's stream", () => {
  for (const protocol of PROTOCOLS) {
    it(`${protocol.name}: holds the run back while the reader stalls, instead of buffering its stream, and finishes once it reads again`, async () => {
      floodCalls = 0;
      const threadId = `flood-${protocol.name.replace(/\W/g, "").toLowerCase()}`;
      const response = await fetch(`${gateway.url}${protocol.path(threadId)}`, {
        method: "POST",
        headers: { authorization: `Bearer ${ALICE}`, "content-type": "application/json" },
        body: JSON.stringify(protocol.body(threadId)),
      });
      expect(response.status).toBe(200);
      const runId = response.headers.get("x-run-id") as string;
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      // Stall until the run stops moving (no new model turn for a while).
      let seen = -1;
      for (let quiet = 0; quiet < 15; ) {
        await sleep(100);
        quiet = floodCalls === seen ? quiet + 1 : 0;
        seen = floodCalls;
      }
      // The run's last events wait for the reader: its end is not reached (a body that buffered would have let the
      // run finish meanwhile; the few megabytes are more than the socket buffers hold).
      expect(floodCalls).toBeGreaterThan(0);
      expect((await client.getRun(threadId, runId, { userId: "alice" })).status).toBe("running");
      const decoder = new TextDecoder();
      let tail = "";
      for (let step = await reader.read(); !step.done; step = await reader.read()) tail = (tail + decoder.decode(step.value)).slice(-4096);
      expect(tail).toMatch(protocol.ends);
      expect(floodCalls).toBe(FLOOD_ROUNDS + 1);
      expect((await client.getRun(threadId, runId, { userId: "alice" })).status).toBe("success");
    }, 300_000);
  }
});
