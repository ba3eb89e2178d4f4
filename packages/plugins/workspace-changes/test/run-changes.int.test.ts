import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { threadPaths } from "@antler/kernel";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import sandboxPlugin from "@antler/plugin-sandbox";
import localPlugin from "@antler/sandbox-local";
import { afterEach, describe, expect, it } from "vitest";
import workspaceChanges, { getRunWorkspaceChanges, WORKSPACE_CHANGES_EVENT, type WorkspaceChanges } from "../src/index.js";

const WS = "/mnt/user-data/workspace";
const KEY = "alice-key-0123456789abcdef";
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("a run's workspace_changes", () => {
  it("lists an added, a modified (with a unified diff) and a deleted file: as a custom event, on the run's record, over HTTP and from the client", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "antler-ws-changes-"));
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
    const scripted = scriptedModelsPlugin({
      m: [
        { toolCalls: [{ id: "w", name: "write_file", args: { description: "new", path: `${WS}/new.md`, content: "# New\n" } }] },
        {
          toolCalls: [
            {
              id: "b",
              name: "bash",
              args: { description: "edit", command: `printf 'one\\nTWO\\nthree\\n' > ${WS}/keep.txt && rm ${WS}/old.txt` },
            },
          ],
        },
        { text: "done" },
      ],
    });
    const client = await AntlerClient.create({
      config: {
        models: [{ name: "m", provider: "scripted" }],
        storage: { backend: "sqlite" },
        title: { enabled: false },
        logging: { level: "warn" },
        sandbox: { allow_host_bash: true },
      },
      plugins: [scripted, localPlugin, sandboxPlugin, workspaceChanges],
      cwd,
      env: {},
      discover: false,
    });
    cleanups.push(() => client.close());
    const host = threadPaths(client.kernel.paths.baseDir, "alice", "t1");
    mkdirSync(host.workspace, { recursive: true });
    writeFileSync(join(host.workspace, "keep.txt"), "one\ntwo\nthree\n");
    writeFileSync(join(host.workspace, "old.txt"), "bye\n");

    const events: Array<{ type: string; data: unknown }> = [];
    for await (const event of client.stream("edit the files", { threadId: "t1", userId: "alice" })) events.push(event as never);
    const custom = events.filter((e) => e.type === "custom").map((e) => e.data as { type?: string } & WorkspaceChanges);
    const event = custom.find((c) => c.type === WORKSPACE_CHANGES_EVENT);
    expect(event).toBeDefined();
    const runId = event?.run_id as string;
    expect(event?.added.map((f) => f.path)).toEqual([`${WS}/new.md`]);
    expect(event?.deleted.map((f) => f.path)).toEqual([`${WS}/old.txt`]);
    expect(event?.modified.map((f) => f.path)).toEqual([`${WS}/keep.txt`]);
    expect(event?.modified[0]?.diff).toBe(
      [`--- a${WS}/keep.txt`, `+++ b${WS}/keep.txt`, "@@ -1,4 +1,4 @@", " one", "-two", "+TWO", " three", " ", ""].join("\n"),
    );
    expect(event?.truncated).toBeUndefined();

    // Stored with the run: the client helper and the HTTP route read the same record; other users get 404.
    const stored = await getRunWorkspaceChanges(client, "t1", runId, { userId: "alice" });
    const { type: _type, ...record } = event as WorkspaceChanges & { type: string };
    expect(stored).toEqual(record);
    const gateway: RunningGateway = await startGateway({
      client,
      config: {
        port: 0,
        auth: {
          mode: "api_keys",
          api_keys: [
            { key: KEY, user: "alice" },
            { key: `${KEY}-bob`, user: "bob" },
          ],
        },
      },
      shutdownGraceMs: 500,
    });
    cleanups.push(() => gateway.close());
    const get = (key: string) =>
      fetch(`${gateway.url}/api/threads/t1/runs/${runId}/changes`, { headers: { authorization: `Bearer ${key}` } });
    const response = await get(KEY);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(stored);
    // Not found (another user's run, an unknown run) answers in the gateway's error shape, like every other route.
    for (const missing of [
      await get(`${KEY}-bob`),
      await fetch(`${gateway.url}/api/threads/t1/runs/nope/changes`, { headers: { authorization: `Bearer ${KEY}` } }),
    ]) {
      expect(missing.status).toBe(404);
      const body = (await missing.json()) as { error?: { code?: string; message?: string; hint?: string } };
      expect(Object.keys(body)).toEqual(["error"]);
      expect(body.error).toMatchObject({
        code: "ANTLER_ERR_WORKSPACE_CHANGES_NOT_FOUND",
        message: expect.stringContaining("no workspace_changes"),
      });
      expect(body.error?.hint).toBeTruthy();
    }
  });
});
