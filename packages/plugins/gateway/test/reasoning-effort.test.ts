import { definePlugin } from "@antler/kernel";
import { ScriptedChatModel } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import { startTestGateway } from "./fixtures.js";

// A provider that answers with the reasoning_effort its entry was built with, so the reply shows what reached it.
const effortProbe = definePlugin({
  name: "effort-probe",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.models.addProvider({
      id: "effort-probe",
      create: (config) => new ScriptedChatModel(() => ({ text: `effort=${config.reasoning_effort ?? "none"}` })),
    });
  },
});

describe("reasoning_effort in a gateway run body", () => {
  it("builds the run's model with the body's effort (the entry's otherwise), and answers 400 for an unknown one", async () => {
    const gw = await startTestGateway({
      plugins: [effortProbe],
      kernelConfig: { models: [{ name: "r", provider: "effort-probe", supports_thinking: true, reasoning_effort: "low" }] },
    });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-e" } });
    const run = async (json: Record<string, unknown>) => {
      const res = await gw.call("/api/threads/t-e/runs/wait", { method: "POST", json: { message: "hi", ...json } });
      return {
        status: res.status,
        body: (await res.json()) as { output?: string; error?: { code: string } },
      };
    };
    const last = (r: Awaited<ReturnType<typeof run>>) => r.body.output;
    expect(last(await run({ reasoning_effort: "high" }))).toBe("effort=high");
    expect(last(await run({}))).toBe("effort=low");
    const bad = await run({ reasoning_effort: "extreme" });
    expect(bad.status).toBe(400);
  });
});
