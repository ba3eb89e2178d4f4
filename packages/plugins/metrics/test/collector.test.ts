import { loadAuthoring, refuseToolCall } from "@antler/kernel/authoring";
import { ToolMessage } from "@langchain/core/messages";
import { beforeAll, describe, expect, it } from "vitest";
import { MetricsCollector } from "../src/collector.js";
import { metricsConfigSchema, TOOL_LABEL_MAX_CHARS } from "../src/index.js";

describe("MetricsCollector tool outcomes", () => {
  // No kernel runs here to load LangChain for refuseToolCall.
  beforeAll(() => loadAuthoring());
  it("counts a refusal (refuseToolCall, a guardrail denial) as refused, a failed tool as error, and a result as success", async () => {
    const collector = new MetricsCollector(metricsConfigSchema.parse({ process_metrics: false }));
    const call = (name: string) =>
      ({ toolCall: { name, id: `${name}-1`, args: {} }, tool: { name }, state: {}, runtime: {} }) as unknown as Parameters<
        MetricsCollector["wrapToolCall"]
      >[0];
    await collector.wrapToolCall(call("bash"), async (request) => refuseToolCall(request, "not for this role"));
    await collector.wrapToolCall(call("bash"), async () => new ToolMessage({ content: "exit 1", tool_call_id: "bash-1", status: "error" }));
    await collector.wrapToolCall(call("add"), async () => new ToolMessage({ content: "3", tool_call_id: "add-1" }));
    const text = await collector.registry.metrics();
    expect(text).toContain('antler_tool_calls_total{tool="bash",outcome="refused"} 1');
    expect(text).toContain('antler_tool_calls_total{tool="bash",outcome="error"} 1');
    expect(text).toContain('antler_tool_calls_total{tool="add",outcome="success"} 1');
    collector.close();
  });

  it("cuts a registered tool's name to TOOL_LABEL_MAX_CHARS in the tool label", async () => {
    const collector = new MetricsCollector(metricsConfigSchema.parse({ process_metrics: false }));
    const name = `mcp__${"server".repeat(10)}__${"tool".repeat(10)}`;
    const request = { toolCall: { name, id: "c-1", args: {} }, tool: { name }, state: {}, runtime: {} } as unknown as Parameters<
      MetricsCollector["wrapToolCall"]
    >[0];
    await collector.wrapToolCall(request, async () => new ToolMessage({ content: "ok", tool_call_id: "c-1" }));
    const text = await collector.registry.metrics();
    expect(text).toContain(`antler_tool_calls_total{tool="${name.slice(0, TOOL_LABEL_MAX_CHARS)}",outcome="success"} 1`);
    expect(text).not.toContain(name);
    collector.close();
  });
});
