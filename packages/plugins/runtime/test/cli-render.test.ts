import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { TurnRenderer } from "../src/cli/render.js";
import type { StreamEvent } from "../src/client/events.js";

function render(events: StreamEvent[]) {
  const out = new PassThrough();
  let text = "";
  out.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  const renderer = new TurnRenderer(out, { tty: false });
  for (const event of events) renderer.handle(event);
  return { summary: renderer.finish(), text: () => text };
}

const call = (id: string, name: string, args: Record<string, unknown>): StreamEvent => ({
  type: "messages-tuple",
  data: { type: "ai", id: `ai-${id}`, content: "", tool_calls: [{ id, name, args }] as never },
});
const result = (id: string, name: string, status: "success" | "error", content: string): StreamEvent => ({
  type: "messages-tuple",
  data: { type: "tool", id: `t-${id}`, tool_call_id: id, name, status, content },
});
const end = (stopReason: string | null): StreamEvent => ({
  type: "end",
  data: {
    thread_id: "t1",
    run_id: "r1",
    trace_id: "a".repeat(32),
    usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    stop_reason: stopReason,
  },
});

describe("antler run's turn renderer", () => {
  it("draws a refused call with its own mark and reason, apart from a tool that failed", async () => {
    const { summary, text } = render([
      call("c1", "bash", { command: "rm -rf /" }),
      result("c1", "bash", "error", "Refused: bash was not run: the guardrail denies rm"),
      call("c2", "read_file", { path: "/nope" }),
      result("c2", "read_file", "error", "Error: read_file failed: no such file"),
      end(null),
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(text()).toContain('⊘ bash({"command":"rm -rf /"}) refused: bash was not run: the guardrail denies rm');
    expect(text()).toContain('✗ read_file({"path":"/nope"}): Error: read_file failed: no such file');
    expect(summary).toMatchObject({ toolCalls: 2, toolErrors: 1, toolRefusals: 1, stopReason: null });
  });

  it("keeps the run's stop reason for the closing line", () => {
    expect(render([end("loop_capped")]).summary.stopReason).toBe("loop_capped");
    expect(render([end("paused")]).summary.stopReason).toBe("paused");
  });
});
