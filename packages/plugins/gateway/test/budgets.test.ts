import { describe, expect, it } from "vitest";
import { BOB_KEY, startTestGateway } from "./fixtures.js";

// $1,000 per million input tokens and $2,000 per million output tokens: 10 in + 5 out = $0.02 a run.
const pricing = { input: 1000, output: 2000 };

describe("budgets at the gateway", () => {
  it("answers a run past the user's daily budget with 402 and ANTLER_ERR_BUDGET_EXCEEDED naming the budget, before anything is recorded", async () => {
    const gw = await startTestGateway({
      script: [
        { text: "first", usage: { input_tokens: 10, output_tokens: 5 } },
        { text: "bob's", usage: { input_tokens: 10, output_tokens: 5 } },
      ],
      kernelConfig: {
        models: [{ name: "m", provider: "scripted", pricing }],
        budgets: [{ name: "per-user-daily", usd_per_user_per_day: 0.02 }],
      },
    });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-budget" } });
    const first = await gw.call("/api/threads/t-budget/runs/wait", { method: "POST", json: { message: "spend" } });
    expect(first.status).toBe(200);

    const refused = await gw.call("/api/threads/t-budget/runs/wait", { method: "POST", json: { message: "more" } });
    expect(refused.status).toBe(402);
    const body = (await refused.json()) as { error: { code: string; message: string; where?: string; details?: Record<string, unknown> } };
    expect(body.error.code).toBe("ANTLER_ERR_BUDGET_EXCEEDED");
    expect(body.error.message).toContain('budget "per-user-daily"');
    expect(body.error.where).toBe("budgets[0]");
    expect(body.error.details).toMatchObject({ budget: "per-user-daily", user_id: "alice", limit_usd: 0.02 });
    // Refused before it started: alice's thread has the one run.
    const { runs } = (await (await gw.call("/api/threads/t-budget/runs")).json()) as { runs: Array<{ cost_usd: number }> };
    expect(runs).toHaveLength(1);
    expect(runs[0]?.cost_usd).toBeCloseTo(0.02, 10);

    // Bob has his own day's budget.
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-bob" }, key: BOB_KEY });
    const bob = await gw.call("/api/threads/t-bob/runs/wait", { method: "POST", json: { message: "hi" }, key: BOB_KEY });
    expect(bob.status).toBe(200);
  });
});
