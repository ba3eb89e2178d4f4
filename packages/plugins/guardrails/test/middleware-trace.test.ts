import { requestTraceContext } from "@antler/kernel";
import { loadAuthoring } from "@antler/kernel/authoring";
import { captureLogs } from "@antler/kernel/testing";
import { ToolMessage } from "@langchain/core/messages";
import { beforeAll, describe, expect, it } from "vitest";
import type { GuardrailRequest } from "../src/index.js";
import { guardrailMiddleware } from "../src/middleware.js";

// No kernel runs here to load LangChain for the authoring helpers (refusals, tools handed to LangChain).
beforeAll(() => loadAuthoring());

type WrapToolCall = NonNullable<ReturnType<typeof guardrailMiddleware>["wrapToolCall"]>;

/** Runs one tool call through the middleware with a denying provider; returns what the provider was asked. */
async function denyOnce(
  context: Record<string, unknown>,
): Promise<{ asked: GuardrailRequest; logged: Record<string, unknown> | undefined }> {
  let asked: GuardrailRequest | undefined;
  const captured = captureLogs({ level: "info" });
  const middleware = guardrailMiddleware({
    providers: [
      {
        provider: {
          name: "deny-all",
          evaluate: (request) => {
            asked = request;
            return { allow: false, reasons: [{ code: "nope", message: "no." }] };
          },
        },
        failClosed: true,
      },
    ],
    subagent: false,
    defaultRole: null,
    logger: captured.logger,
  });
  const wrap = middleware.wrapToolCall as WrapToolCall;
  const request = { toolCall: { id: "call-1", name: "bash", args: {} }, runtime: { context }, tool: undefined, state: {} };
  const handler = async () => new ToolMessage({ content: "ran", tool_call_id: "call-1" });
  await wrap(request as never, handler as never);
  if (!asked) throw new Error("the provider was never asked");
  return { asked, logged: captured.lines.find((l) => String(l.msg).includes("guardrail denied")) };
}

describe("the Guardrail middleware's trace id", () => {
  it("outside any trace and without a run id in the context, the provider and the denial log still get one id", async () => {
    const { asked, logged } = await denyOnce({});
    expect(asked.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(logged?.trace_id).toBe(asked.trace_id);
  });

  it("an unusable id in the run context (a control character) is never passed on; the ambient id is used instead", async () => {
    const { asked } = await requestTraceContext("ambient-trace-1", () => denyOnce({ antler_trace_id: "evil\r\nX-Injected: 1" }));
    expect(asked.trace_id).toBe("ambient-trace-1");
  });

  it("a usable id in the run context wins over the ambient one", async () => {
    const { asked } = await requestTraceContext("ambient-trace-2", () => denyOnce({ antler_trace_id: "run-trace-2" }));
    expect(asked.trace_id).toBe("run-trace-2");
  });
});
