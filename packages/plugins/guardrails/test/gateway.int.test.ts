import { type GatewayConfigInput, type RunningGateway, startGateway } from "@antler/plugin-gateway";
import type { SerializedMessage } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import { callOnce, guardedClient, onCleanup, ROLES } from "./fixtures.js";

const ALICE_KEY = "alice-key-0123456789abcdef"; // role user
const ROOT_KEY = "root-key-0123456789abcdef01"; // role admin
const GUEST_KEY = "guest-key-0123456789abcdef"; // no role: default_role

const API_KEYS = {
  mode: "api_keys" as const,
  api_keys: [
    { key: ALICE_KEY, user: "alice", role: "user" },
    { key: ROOT_KEY, user: "root", role: "admin" },
    { key: GUEST_KEY, user: "guest" },
  ],
};

async function serve(script: Parameters<typeof guardedClient>[0]["script"], auth: GatewayConfigInput["auth"] = API_KEYS) {
  const guarded = await guardedClient({ script, config: { authorization: ROLES } });
  const gateway: RunningGateway = await startGateway({
    client: guarded.client,
    config: { port: 0, auth },
    shutdownGraceMs: 1000,
  });
  onCleanup(() => gateway.close());
  const call = (key: string, path: string, json?: unknown) =>
    fetch(`${gateway.url}${path}`, {
      method: json === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
  return { ...guarded, gateway, call };
}

type WaitResult = { values: { messages: SerializedMessage[] } };
const toolResults = (result: WaitResult) => result.values.messages.filter((m) => m.type === "tool");

describe("authorization over the gateway (API keys with roles)", () => {
  it("answers 403 ANTLER_ERR_MODEL_FORBIDDEN when the key's role may not use the model, and starts no run", async () => {
    const { call, calls } = await serve([{ text: "never" }]);
    await call(ALICE_KEY, "/api/threads", { thread_id: "t1" });
    const response = await call(ALICE_KEY, "/api/threads/t1/runs/wait", { message: "hi", model: "big" });
    expect(response.status).toBe(403);
    const body = (await response.json()) as { error: { code: string; message: string; hint: string; where: string } };
    expect(body.error.code).toBe("ANTLER_ERR_MODEL_FORBIDDEN");
    expect(body.error.message).toBe('role "user" may not use model "big"');
    expect(body.error.where).toBe("authorization.roles.user.models");
    expect(body.error.hint).toContain("Models this role may use: small");
    expect(calls()).toHaveLength(0);
    const runs = (await (await call(ALICE_KEY, "/api/threads/t1/runs")).json()) as { runs: unknown[] };
    expect(runs.runs).toHaveLength(0);
    // The streaming route refuses the same way, before any SSE frame.
    const stream = await call(ALICE_KEY, "/api/threads/t1/runs/stream", { message: "hi", model: "big" });
    expect(stream.status).toBe(403);
  });

  it("a user key never gets bash, even when the body claims user_role admin; a forged call is refused at execution", async () => {
    const { call, calls, runs } = await serve(callOnce("bash"));
    await call(ALICE_KEY, "/api/threads", { thread_id: "t1" });
    const response = await call(ALICE_KEY, "/api/threads/t1/runs/wait", {
      message: "run a shell",
      model: "small",
      context: { user_role: "admin" },
      config: { configurable: { user_role: "admin" } },
    });
    expect(response.status).toBe(200);
    expect(calls()[0]?.tools).not.toContain("bash");
    expect(runs.bash).toBe(0);
    const [refusal] = toolResults((await response.json()) as WaitResult);
    expect(refusal?.content).toContain('- role_forbids_tool_group: role "user" may not use tools of group "bash"');
  });

  it("an admin key runs bash on any model; a key without a role acts as default_role", async () => {
    const { call, runs } = await serve(callOnce("bash"));
    await call(ROOT_KEY, "/api/threads", { thread_id: "t1" });
    const admin = await call(ROOT_KEY, "/api/threads/t1/runs/wait", { message: "run a shell", model: "big" });
    expect(admin.status).toBe(200);
    expect(runs.bash).toBe(1);
    await call(GUEST_KEY, "/api/threads", { thread_id: "t2" });
    const guest = await call(GUEST_KEY, "/api/threads/t2/runs/wait", { message: "run a shell", model: "big" });
    expect(guest.status).toBe(403);
  });

  it("GET /api/models lists only the models the key's role may use, and a hidden model is still refused for a run", async () => {
    const { call, calls } = await serve([{ text: "never" }]);
    const names = async (key: string) => {
      const response = await call(key, "/api/models");
      expect(response.status).toBe(200);
      return ((await response.json()) as { models: Array<{ name: string }> }).models.map((m) => m.name);
    };
    expect(await names(ROOT_KEY)).toEqual(["small", "big"]);
    expect(await names(ALICE_KEY)).toEqual(["small"]);
    // A key without a role lists what default_role (user) may use.
    expect(await names(GUEST_KEY)).toEqual(["small"]);
    await call(ALICE_KEY, "/api/threads", { thread_id: "t1" });
    const run = await call(ALICE_KEY, "/api/threads/t1/runs/wait", { message: "hi", model: "big" });
    expect(run.status).toBe(403);
    expect(((await run.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_MODEL_FORBIDDEN");
    expect(calls()).toHaveLength(0);
  });

  it("GET /api/models lists nothing for a key whose role is not configured", async () => {
    const { call } = await serve([{ text: "never" }], {
      mode: "api_keys",
      api_keys: [{ key: GUEST_KEY, user: "ghost", role: "ghost" }],
    });
    const response = await call(GUEST_KEY, "/api/models");
    expect(response.status).toBe(200);
    expect(((await response.json()) as { models: unknown[] }).models).toEqual([]);
  });

  it("mode none gives its single user auth.role", async () => {
    const { call, runs } = await serve(callOnce("bash"), { mode: "none", user: "solo", role: "admin" });
    await call("unused", "/api/threads", { thread_id: "t1" });
    const response = await call("unused", "/api/threads/t1/runs/wait", { message: "run a shell", model: "big" });
    expect(response.status).toBe(200);
    expect(runs.bash).toBe(1);
  });
});
