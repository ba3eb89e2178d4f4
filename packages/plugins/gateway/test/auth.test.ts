import { isAntlerError } from "@antler/kernel";
import { AntlerClient } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import { gatewayConfigSchema } from "../src/config.js";
import { startGateway } from "../src/server.js";
import { ALICE_KEY, BOB_KEY, collectSse, startTestGateway, tempDir } from "./fixtures.js";

describe("API-key auth", () => {
  it("rejects a request without a key or with an unknown key with 401, a clear message and a Bearer challenge", async () => {
    const gw = await startTestGateway();
    const missing = await gw.call("/api/threads", { key: null });
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toContain("Bearer");
    const body = (await missing.json()) as { error: { code: string; message: string; hint: string } };
    expect(body.error).toMatchObject({ code: "ANTLER_ERR_GATEWAY_UNAUTHENTICATED", message: "this endpoint needs an API key" });
    expect(body.error.hint).toContain("X-API-Key");
    const wrong = await gw.call("/api/threads", { key: "not-a-configured-key-at-all" });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { message: string } }).error.message).toBe("the API key is not valid");
  });

  it("accepts the key as X-API-Key as well as a Bearer token, and acts as the key's user", async () => {
    const gw = await startTestGateway();
    const created = await gw.call("/api/threads", { key: null, method: "POST", json: {}, headers: { "X-API-Key": BOB_KEY } });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { user_id: string }).user_id).toBe("bob");
  });

  it("rejects config without keys in api_keys mode, short keys, and the reserved user id `internal`", () => {
    expect(gatewayConfigSchema.safeParse({ auth: { mode: "api_keys" } }).error?.issues[0]?.message).toContain("no keys are configured");
    expect(gatewayConfigSchema.safeParse({ auth: { api_keys: [{ key: "short", user: "a" }] } }).error?.issues[0]?.message).toContain(
      "at least 16",
    );
    const internal = gatewayConfigSchema.safeParse({ auth: { api_keys: [{ key: "k".repeat(20), user: "internal" }] } });
    expect(internal.error?.issues[0]?.message).toContain("reserved");
  });

  it("serves one unauthenticated user in mode none, and refuses to bind a non-loopback host in that mode", async () => {
    const gw = await startTestGateway({ config: { auth: { mode: "none", user: "solo" } } });
    const created = await gw.call("/api/threads", { key: null, method: "POST", json: {} });
    expect(((await created.json()) as { user_id: string }).user_id).toBe("solo");
    const client = await AntlerClient.create({ config: { storage: { backend: "memory" }, base_dir: tempDir() }, discover: false, env: {} });
    try {
      const error = await startGateway({ client, config: { auth: { mode: "none" } }, host: "0.0.0.0", port: 0 }).catch((e: unknown) => e);
      expect(isAntlerError(error, "ANTLER_ERR_CONFIG_INVALID")).toBe(true);
      expect((error as Error).message).toContain("loopback");
    } finally {
      await client.close();
    }
  });
});

describe("per-user scoping", () => {
  it("gives 404 for every route that names another user's thread, run, upload or artifact", async () => {
    const gw = await startTestGateway({
      script: [
        { id: "a1", text: "", toolCalls: [{ name: "write_report", args: { name: "secret.md", text: "alice only" }, id: "c1" }] },
        { id: "a2", text: "done" },
      ],
    });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "alice-thread" } });
    const run = await gw.call("/api/threads/alice-thread/runs/wait", { method: "POST", json: { message: "write" } });
    const runId = ((await run.json()) as { run_id: string }).run_id;
    const form = new FormData();
    form.append("files", new Blob(["x"]), "a.txt");
    expect((await gw.call("/api/threads/alice-thread/uploads", { method: "POST", body: form })).status).toBe(201);
    expect((await gw.call("/api/threads/alice-thread/artifacts/mnt/user-data/outputs/secret.md")).status).toBe(200);

    const asBob = (path: string, init: Parameters<typeof gw.call>[1] = {}) => gw.call(path, { ...init, key: BOB_KEY });
    const bobForm = new FormData();
    bobForm.append("files", new Blob(["y"]), "b.txt");
    const attempts: Array<[string, Response]> = [
      ["GET thread", await asBob("/api/threads/alice-thread")],
      ["GET state", await asBob("/api/threads/alice-thread/state")],
      ["GET runs", await asBob("/api/threads/alice-thread/runs")],
      ["GET run", await asBob(`/api/threads/alice-thread/runs/${runId}`)],
      ["cancel run", await asBob(`/api/threads/alice-thread/runs/${runId}/cancel`, { method: "POST" })],
      ["stream", await asBob("/api/threads/alice-thread/runs/stream", { method: "POST", json: { message: "hi" } })],
      ["wait", await asBob("/api/threads/alice-thread/runs/wait", { method: "POST", json: { message: "hi" } })],
      ["upload", await asBob("/api/threads/alice-thread/uploads", { method: "POST", body: bobForm })],
      ["artifact", await asBob("/api/threads/alice-thread/artifacts/mnt/user-data/outputs/secret.md")],
      ["upload artifact", await asBob("/api/threads/alice-thread/artifacts/mnt/user-data/uploads/a.txt")],
      ["DELETE", await asBob("/api/threads/alice-thread", { method: "DELETE" })],
    ];
    for (const [what, response] of attempts) {
      expect({ what, status: response.status }).toEqual({ what, status: 404 });
      // A 404 that looks exactly like a missing thread: nothing confirms the thread exists.
      const text = await response.text();
      expect(text).not.toContain("alice only");
    }
    const bobThreads = (await (await asBob("/api/threads")).json()) as { threads: unknown[] };
    expect(bobThreads.threads).toEqual([]);
    // Alice's thread and run are untouched.
    expect((await gw.call("/api/threads/alice-thread")).status).toBe(200);
    expect(((await (await gw.call("/api/threads/alice-thread/runs")).json()) as { runs: unknown[] }).runs).toHaveLength(1);
  });

  it("lets two users hold the same thread id without ever seeing each other's messages", async () => {
    const gw = await startTestGateway({ script: (messages) => ({ text: `echo: ${String(messages.at(-1)?.content)}` }) });
    for (const key of [ALICE_KEY, BOB_KEY]) {
      expect((await gw.call("/api/threads", { key, method: "POST", json: { thread_id: "shared-id" } })).status).toBe(201);
    }
    await collectSse(await gw.call("/api/threads/shared-id/runs/stream", { method: "POST", json: { message: "alice's words" } }));
    await collectSse(
      await gw.call("/api/threads/shared-id/runs/stream", { key: BOB_KEY, method: "POST", json: { message: "bob's words" } }),
    );
    const aliceState = (await (await gw.call("/api/threads/shared-id/state")).json()) as { messages: Array<{ content: string }> };
    const bobState = (await (await gw.call("/api/threads/shared-id/state", { key: BOB_KEY })).json()) as {
      messages: Array<{ content: string }>;
    };
    expect(aliceState.messages.map((m) => m.content)).toEqual(["alice's words", "echo: alice's words"]);
    expect(bobState.messages.map((m) => m.content)).toEqual(["bob's words", "echo: bob's words"]);
  });
});
