import { definePlugin } from "@antler/kernel";
import { ScriptedChatModel, type ScriptFunction } from "@antler/kernel/testing";
import { agentDeleteResponseSchema, agentDetailsSchema, agentsListResponseSchema } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { BOB_KEY, startTestGateway } from "./fixtures.js";

function conforms<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const wire = JSON.parse(JSON.stringify(value)) as unknown;
  const parsed = schema.parse(wire);
  expect(parsed).toEqual(wire);
  return parsed;
}

const echo: ScriptFunction = () => ({ text: "ok" });

describe("custom agents over HTTP", () => {
  it("PUT, GET, list and DELETE /api/agents match the client's methods, and the route list shows them", async () => {
    const gw = await startTestGateway({ script: echo });
    const put = await gw.call("/api/agents/quill", {
      method: "PUT",
      json: { soul: "You are Quill.", description: "Research", tool_groups: ["web"], thinking: false },
    });
    expect(put.status).toBe(200);
    const saved = conforms(agentDetailsSchema, await put.json());
    expect(saved.thinking).toBe(false);
    expect(saved).toEqual(conforms(agentDetailsSchema, await gw.client.getAgent("quill", { userId: "alice" })));
    expect(conforms(agentDetailsSchema, await (await gw.call("/api/agents/quill")).json())).toEqual(saved);
    const list = conforms(agentsListResponseSchema, await (await gw.call("/api/agents")).json());
    expect(list).toEqual(conforms(agentsListResponseSchema, await gw.client.listAgents({ userId: "alice" })));
    expect(list.agents.map((a) => a.name)).toEqual(["quill"]);
    const deleted = await gw.call("/api/agents/quill", { method: "DELETE" });
    expect(conforms(agentDeleteResponseSchema, await deleted.json())).toEqual({ name: "quill", deleted: true });
    await gw.client.saveAgent("other", { soul: "x" }, { userId: "alice" });
    conforms(agentDeleteResponseSchema, await gw.client.deleteAgent("other", { userId: "alice" }));

    const routes = ((await (await gw.call("/api")).json()) as { routes: Array<{ method: string; path: string }> }).routes;
    for (const r of ["GET /api/agents", "GET /api/agents/:name", "PUT /api/agents/:name", "DELETE /api/agents/:name"]) {
      expect(routes.map((x) => `${x.method} ${x.path}`)).toContain(r);
    }
  });

  it("another user's agent is 404 to read, run or delete, and a bad name or body is a 400 that says why", async () => {
    const gw = await startTestGateway({ script: echo });
    await gw.call("/api/agents/quill", { method: "PUT", json: { soul: "You are Quill." } });
    const asBob = { key: BOB_KEY };
    expect((await gw.call("/api/agents/quill", asBob)).status).toBe(404);
    expect((await gw.call("/api/agents/quill", { ...asBob, method: "DELETE" })).status).toBe(404);
    expect(await (await gw.call("/api/agents", asBob)).json()).toEqual({ agents: [] });
    await gw.call("/api/threads", { ...asBob, method: "POST", json: { thread_id: "tb" } });
    const run = await gw.call("/api/threads/tb/runs/wait", { ...asBob, method: "POST", json: { message: "hi", agent_name: "quill" } });
    expect(run.status).toBe(404);
    expect(((await run.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_AGENT_NOT_FOUND");

    const badName = await gw.call("/api/agents/..%2Fbob", { method: "PUT", json: { soul: "x" } });
    expect(badName.status).toBe(400);
    expect(((await badName.json()) as { error: { hint: string } }).error.hint).toContain("lowercase letters");
    const badBody = await gw.call("/api/agents/ok", { method: "PUT", json: { soul: "x", modle: "m" } });
    expect(badBody.status).toBe(400);
    const badModel = await gw.call("/api/agents/ok", { method: "PUT", json: { soul: "x", model: "nope" } });
    expect(badModel.status).toBe(400);
    expect(((await badModel.json()) as { error: { message: string } }).error.message).toContain('"nope"');
  });

  it("a run body's agent_name runs that agent: its soul reaches the model", async () => {
    const systemPrompts: string[] = [];
    const gw = await startTestGateway({
      script: (messages) => {
        systemPrompts.push(messages[0]?.getType() === "system" ? (messages[0]?.text ?? "") : "");
        return { text: "ok" };
      },
    });
    await gw.call("/api/agents/quill", { method: "PUT", json: { soul: "You are Quill, from HTTP." } });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t1" } });
    expect((await gw.call("/api/threads/t1/runs/wait", { method: "POST", json: { message: "hi" } })).status).toBe(200);
    const run = await gw.call("/api/threads/t1/runs/wait", { method: "POST", json: { message: "hi", agent_name: "quill" } });
    expect(run.status).toBe(200);
    expect(systemPrompts).toHaveLength(2);
    expect(systemPrompts[0]).not.toContain("You are Quill, from HTTP.");
    expect(systemPrompts[1]).toContain("You are Quill, from HTTP.");
  });

  it("a run body's thinking_enabled reaches the run: the model is built with that thinking block and the run's context says so", async () => {
    // A model whose reply names the thinking block it was built with.
    const probe = definePlugin({
      name: "thinking-probe",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.models.addProvider({ id: "probe", create: (config) => new ScriptedChatModel(() => ({ text: String(config.options?.mode) })) });
      },
    });
    const gw = await startTestGateway({
      plugins: [probe],
      kernelConfig: {
        models: [
          {
            name: "m",
            provider: "probe",
            supports_thinking: true,
            when_thinking_enabled: { options: { mode: "thinking" } },
            when_thinking_disabled: { options: { mode: "quick" } },
          },
        ],
      },
    });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t1" } });
    const wait = async (json: Record<string, unknown>) => {
      const res = await gw.call("/api/threads/t1/runs/wait", { method: "POST", json: { message: "hi", ...json } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { run_id: string; output: string };
      const run = (await (await gw.call(`/api/threads/t1/runs/${body.run_id}`)).json()) as {
        kwargs: { context: Record<string, unknown> };
      };
      return [body.output, run.kwargs.context.thinking_enabled];
    };
    expect(await wait({})).toEqual(["thinking", true]);
    expect(await wait({ thinking_enabled: false })).toEqual(["quick", false]);
    expect(await wait({ context: { thinking_enabled: false } })).toEqual(["quick", false]);
    expect(await wait({ config: { configurable: { thinking_enabled: false } } })).toEqual(["quick", false]);
    await gw.call("/api/agents/brief", { method: "PUT", json: { soul: "Be brief.", thinking: false } });
    expect(await wait({ agent_name: "brief" })).toEqual(["quick", false]);
    expect(await wait({ agent_name: "brief", thinking_enabled: true })).toEqual(["thinking", true]);
    const bad = await gw.call("/api/threads/t1/runs/wait", { method: "POST", json: { message: "hi", thinking_enabled: "no" } });
    expect(bad.status).toBe(400);
  });
});

describe("a custom agent's model over HTTP", () => {
  // Two models that answer with their own name, so the reply shows which one ran.
  const named = definePlugin({
    name: "named-models",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.models.addProvider({ id: "named", create: (config) => new ScriptedChatModel(() => ({ text: config.name })) });
    },
  });

  it("a run with agent_name uses the agent's model: unless the body names one, over wait and stream alike", async () => {
    const gw = await startTestGateway({
      plugins: [named],
      kernelConfig: {
        models: [
          { name: "m", provider: "named" },
          { name: "special", provider: "named" },
        ],
      },
    });
    await gw.call("/api/agents/quill", { method: "PUT", json: { soul: "You are Quill.", model: "special" } });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t1" } });
    const wait = async (json: Record<string, unknown>) => {
      const res = await gw.call("/api/threads/t1/runs/wait", { method: "POST", json: { message: "hi", ...json } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { run_id: string; output: string };
      const run = (await (await gw.call(`/api/threads/t1/runs/${body.run_id}`)).json()) as { model: string };
      return [body.output, run.model];
    };
    expect(await wait({})).toEqual(["m", "m"]);
    expect(await wait({ agent_name: "quill" })).toEqual(["special", "special"]);
    expect(await wait({ agent_name: "quill", model: "m" })).toEqual(["m", "m"]);

    const stream = await gw.call("/api/threads/t1/runs/stream", { method: "POST", json: { message: "hi", agent_name: "quill" } });
    expect(stream.status).toBe(200);
    const runId = stream.headers.get("x-run-id");
    await stream.text();
    const run = (await (await gw.call(`/api/threads/t1/runs/${runId}`)).json()) as { model: string };
    expect(run.model).toBe("special");
  });
});
