// The HTTP side of sse.bench.mjs, in a process of its own (as real clients are): opens one SSE stream per
// thread id at once and prints, as JSON, each event's arrival time (epoch ms, sub-ms precision) by run id and
// SSE id (the metadata frame is id 1; the benchmark ignores ids it did not stamp).
import { performance } from "node:perf_hooks";

const [url, ...threads] = process.argv.slice(2);
const now = () => performance.timeOrigin + performance.now();

async function stream(threadId) {
  const response = await fetch(`${url}/api/threads/${threadId}/runs/stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: "add 1 and 2" }),
  });
  if (response.status !== 200) throw new Error(`stream for ${threadId}: HTTP ${response.status} ${await response.text()}`);
  const runId = response.headers.get("x-run-id");
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const arrivals = [];
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
      const id = /^id: (\d+)$/m.exec(frame)?.[1];
      if (!id) continue; // keep-alives carry no id
      JSON.parse(/^data: (.*)$/m.exec(frame)[1]);
      arrivals.push([Number(id), now()]);
    }
  }
  return { runId, arrivals };
}

const results = await Promise.all(threads.map(stream));
process.stdout.write(JSON.stringify(results));
