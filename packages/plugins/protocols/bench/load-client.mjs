// The client side of the protocol benchmarks, in a process of its own (as real clients are, and so its CPU does
// not count as the server's). `node load-client.mjs '<job json>'` prints one JSON result on stdout.
//
// latency job { mode: "latency", protocol, url, streams, tokens, tag }: opens one stream per thread at once and notes,
// for each text-delta event of the protocol, when it was parsed and the model's stamps in its text.
// throughput job { mode: "throughput", target, url, concurrency, runsPerWorker, tag }: `concurrency` workers each
// start `runsPerWorker` runs one after another (a new thread, then a streaming run); per run, the time to the
// first model output event and the stream's bytes.
import { performance } from "node:perf_hooks";
import { Client } from "@langchain/langgraph-sdk";

const job = JSON.parse(process.argv[2]);
const now = () => performance.timeOrigin + performance.now();
const STAMP = /⟦(\d+)@(\d+\.\d+)⟧/g;
const MESSAGE = "add 1 and 2";
const json = { "content-type": "application/json" };

// Every response body is counted as it is read (stream bytes, the same way for every client and server).
let bytes = 0;
const plainFetch = globalThis.fetch;
// Connection resets before any answer (seen on a starved machine when a pooled keep-alive socket is reused just
// as the server times it out) are counted; the SDK's client retries them itself, and post() below retries once.
let resets = 0;
globalThis.fetch = async (...args) => {
  const response = await plainFetch(...args).catch((error) => {
    if (error?.cause?.code === "ECONNRESET") resets += 1;
    throw error;
  });
  if (!response.body) return response;
  const counted = response.body.pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
};

async function post(url, body) {
  const send = () => fetch(url, { method: "POST", headers: json, body: JSON.stringify(body) });
  const response = await send().catch((error) => {
    if (error?.cause?.code !== "ECONNRESET") throw error;
    return send();
  });
  if (!response.ok) throw new Error(`POST ${url}: HTTP ${response.status} ${await response.text()}`);
  return response;
}

/** Reads an SSE body, calling `onFrame(event, data)` as each frame is parsed (comments and keep-alives skipped). */
async function readSse(response, onFrame) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end !== -1) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      let event = "message";
      const data = [];
      for (const line of frame.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) onFrame(event, data.join("\n"));
    }
  }
}

const uiMessage = (id) => ({ id, role: "user", parts: [{ type: "text", text: MESSAGE }] });

/**
 * Per protocol: how to open one streaming run on a new thread (`open(threadId)` resolves with the response once
 * its headers are in), and which parsed frames carry model text (`isText(event, parsed)`).
 */
const protocols = {
  native: {
    prepare: (url, thread) => post(`${url}/api/threads`, { thread_id: thread }),
    open: (url, thread) => post(`${url}/api/threads/${thread}/runs/stream`, { message: MESSAGE }),
    isText: (event) => event === "messages-tuple",
  },
  "ai-sdk": {
    open: (url, thread) => post(`${url}/ai-sdk/chat`, { id: thread, messages: [uiMessage(`${thread}-m`)], trigger: "submit-message" }),
    isText: (_event, data) => data.type === "text-delta",
  },
  langgraph: {
    prepare: (url, thread) => post(`${url}/langgraph/threads`, { thread_id: thread }),
    open: (url, thread) =>
      post(`${url}/langgraph/threads/${thread}/runs/stream`, {
        assistant_id: "agent",
        input: { messages: [{ role: "user", content: MESSAGE }] },
        stream_mode: ["messages-tuple", "values"],
      }),
    isText: (event) => event === "messages" || event.startsWith("messages|"),
  },
  "ag-ui": {
    open: (url, thread) =>
      post(`${url}/ag-ui`, {
        threadId: thread,
        runId: crypto.randomUUID(),
        messages: [{ id: `${thread}-m`, role: "user", content: MESSAGE }],
        tools: [],
        context: [],
        state: {},
        forwardedProps: {},
      }),
    isText: (_event, data) => data.type === "TEXT_MESSAGE_CONTENT",
  },
};

async function latencyStream(protocol, thread) {
  const response = await protocol.open(job.url, thread);
  const pairs = [];
  const seen = new Set();
  const last = [];
  await readSse(response, (event, raw) => {
    last.push(`${event}: ${raw.slice(0, 300)}`);
    if (last.length > 3) last.shift();
    if (!raw.includes("⟦")) return;
    const at = now();
    let data;
    try {
      data = JSON.parse(raw);
    } catch {
      return;
    }
    if (!protocol.isText(event, data)) return;
    for (const [, index, stamp] of raw.matchAll(STAMP)) {
      if (seen.has(index)) continue;
      seen.add(index);
      pairs.push([Number(stamp), at]);
    }
  });
  if (pairs.length < job.tokens) problems.push(`${thread}: ${pairs.length} of ${job.tokens} tokens; last frames ${last.join(" | ")}`);
  return pairs;
}

const problems = [];
async function latencyJob() {
  const protocol = protocols[job.protocol];
  const threads = Array.from({ length: job.streams }, (_, i) => `${job.tag}-${i}`);
  if (protocol.prepare) {
    for (let i = 0; i < threads.length; i += 20) await Promise.all(threads.slice(i, i + 20).map((t) => protocol.prepare(job.url, t)));
  }
  const streams = await Promise.all(threads.map((thread) => latencyStream(protocol, thread)));
  return { pairs: streams.flat(), bytes, problems, resets };
}

/** One run against Antler's native API (its own REST/SSE shape, raw fetch). */
async function nativeRun(thread) {
  const creating = now();
  await post(`${job.url}/api/threads`, { thread_id: thread });
  const started = now();
  let first;
  const response = await post(`${job.url}/api/threads/${thread}/runs/stream`, { message: MESSAGE });
  await readSse(response, (event, raw) => {
    if (first === undefined && event === "messages-tuple") {
      JSON.parse(raw);
      first = now();
    }
  });
  return { create: started - creating, ttft: first - started, ms: now() - started };
}

/** One run through the LangGraph SDK's Client (LangGraph's server, or a LangGraph-compatible route). */
async function sdkRun(client) {
  const creating = now();
  const thread = await client.threads.create();
  const started = now();
  let first;
  const stream = client.runs.stream(thread.thread_id, job.assistant ?? "agent", {
    input: { messages: [{ role: "user", content: MESSAGE }] },
    streamMode: ["messages-tuple", "values"],
  });
  for await (const chunk of stream) {
    if (chunk.event === "error") throw new Error(`run failed: ${JSON.stringify(chunk.data)}`);
    if (first === undefined && (chunk.event === "messages" || chunk.event.startsWith("messages|"))) first = now();
  }
  if (first === undefined) throw new Error("the run streamed no messages event");
  return { create: started - creating, ttft: first - started, ms: now() - started };
}

async function throughputJob() {
  const client = job.target === "sdk" ? new Client({ apiUrl: job.url }) : undefined;
  const runs = [];
  const errors = [];
  const cpuBefore = process.cpuUsage();
  const started = now();
  await Promise.all(
    Array.from({ length: job.concurrency }, async (_, worker) => {
      for (let i = 0; i < job.runsPerWorker; i++) {
        try {
          runs.push(client ? await sdkRun(client) : await nativeRun(`${job.tag}-${worker}-${i}`));
        } catch (error) {
          errors.push(`${error?.message ?? error}${error?.cause ? ` (${error.cause.code ?? error.cause.message})` : ""}`);
        }
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  const clientCpuMs = (cpu.user + cpu.system) / 1000;
  return { seconds: (now() - started) / 1000, runs, errors: errors.slice(0, 5), failed: errors.length, bytes, resets, clientCpuMs };
}

const result = job.mode === "latency" ? await latencyJob() : await throughputJob();
process.stdout.write(JSON.stringify(result));
