// The loopback model both servers call (the kit's OpenAI-compatible server, in the benchmark's own process): with
// `tool` (default) the first call of a run asks for the `add` tool and the call after the tool result answers;
// without, the first call answers. The answer is `tokens` words, each stamped with the moment the server wrote it
// (`⟦<index>@<epoch ms>⟧`), so a client in another process can tell each event's latency from the text alone,
// whatever protocol carried it.
//
// A gate can hold first calls (streams open, runs waiting at the model) until a round has all its streams open,
// then let them go one at a time over a spread: streams that are open together but busy at different moments.
import { performance } from "node:perf_hooks";
import { startOpenAICompatibleServer } from "@antler/kernel/testing";

const now = () => performance.timeOrigin + performance.now();
export const STAMP = /⟦(\d+)@(\d+\.\d+)⟧/g;

export async function startBenchModel({ tokens = 16, tool = true } = {}) {
  const held = [];
  let holding = false;
  let calls = 0;
  const server = await startOpenAICompatibleServer({
    handler: async (body) => {
      calls += 1;
      const afterTool = body.messages.at(-1)?.role === "tool";
      // Only a run's first call waits at the gate.
      if (holding && !afterTool) await new Promise((resolve) => held.push(resolve));
      if (afterTool || !tool) {
        const at = now().toFixed(3);
        const words = Array.from({ length: tokens }, (_, i) => `⟦${i}@${at}⟧`);
        return { text: words.join(" "), usage: { input_tokens: 20, output_tokens: tokens } };
      }
      return { toolCalls: [{ name: "add", args: { a: 1, b: 2 } }], usage: { input_tokens: 10, output_tokens: 3 } };
    },
  });
  return {
    url: server.url,
    get calls() {
      return calls;
    },
    /** First calls that wait at the gate. */
    get waiting() {
      return held.length;
    },
    hold() {
      holding = true;
    },
    /** Opens the gate, letting waiting calls go one at a time over `spreadMs`. */
    async release(spreadMs) {
      holding = false;
      const step = spreadMs / Math.max(1, held.length);
      while (held.length > 0) {
        held.shift()();
        if (step > 0) await new Promise((r) => setTimeout(r, step));
      }
    },
    close: () => server.close(),
  };
}

/**
 * Waits until `count` first calls wait at the gate, or `timeoutMs` passes, or `over` settles; returns how many
 * were waiting (it never waits for something that can no longer happen).
 */
export async function whenWaiting(model, count, timeoutMs, over) {
  let ended = false;
  over.then(
    () => (ended = true),
    () => (ended = true),
  );
  const deadline = performance.now() + timeoutMs;
  while (model.waiting < count && !ended && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return model.waiting;
}
