import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, type Sandbox, type SandboxProvider } from "@antler/kernel";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import { LocalSandboxProvider } from "@antler/sandbox-local";
import { afterEach, describe, expect, it } from "vitest";
import sandboxPlugin from "../src/index.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);

/**
 * A provider whose sandbox is a real local one with a slow live read of one image (a remote download), and a log
 * of when that read starts and ends and when the sandbox is released.
 */
function slowReadProvider() {
  const log: string[] = [];
  let openGate: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    openGate = resolve;
  });
  let readStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    readStarted = resolve;
  });
  const plugin = definePlugin({
    name: "test-slow-read",
    version: "0.1.0",
    kernel: "^0.1.0",
    setup(ctx) {
      const inner = new LocalSandboxProvider({ baseDir: ctx.paths.baseDir });
      const wrap = (s: Sandbox): Sandbox => ({
        id: s.id,
        generation: "g1",
        executeCommand: (c, o) => s.executeCommand(c, o),
        readFile: (p, o) => s.readFile(p, o),
        downloadFile: async (p) => {
          if (!p.endsWith("/pic.png")) return s.downloadFile(p);
          log.push("read-start");
          readStarted();
          await gate;
          log.push("read-end");
          return PNG;
        },
        listDir: async (p, d) =>
          p === "/mnt/user-data/outputs"
            ? ([{ path: "/mnt/user-data/outputs/pic.png", type: "file", size: PNG.length }] as never)
            : s.listDir(p, d),
        writeFile: (p, c, o) => s.writeFile(p, c, o),
        glob: (p, o) => s.glob(p, o),
        grep: (p, o) => s.grep(p, o),
        updateFile: (p, b) => s.updateFile(p, b),
      });
      const provider: SandboxProvider = {
        id: "slow-read",
        isolated: true,
        acquire: async (t, o) => wrap(await inner.acquire(t, o)),
        get: (id) => {
          const s = inner.get(id);
          return s ? wrap(s) : undefined;
        },
        release: async (id) => {
          log.push("release");
          await inner.release(id);
        },
        reset: () => inner.reset(),
        close: () => inner.close(),
      };
      ctx.sandbox.addProvider(provider);
    },
  });
  return { plugin, log, openGate, started };
}

describe("view_image drains its live-sandbox read before a cancelled run releases the sandbox", () => {
  it("a run cancelled during a slow view_image read releases its sandbox only after the read has finished", async () => {
    const slow = slowReadProvider();
    const cwd = mkdtempSync(join(tmpdir(), "antler-drain-"));
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
    const scripted = scriptedModelsPlugin({
      m: [
        { toolCalls: [{ id: "l", name: "ls", args: { description: "look", path: "/mnt/user-data/workspace" } }] },
        { toolCalls: [{ id: "v", name: "view_image", args: { image_path: "/mnt/user-data/outputs/pic.png" } }] },
        { text: "never reached" },
      ],
    });
    const client = await AntlerClient.create({
      config: {
        models: [{ name: "m", provider: "scripted", supports_vision: true }],
        storage: { backend: "memory" },
        title: { enabled: false },
        logging: { level: "error" },
        sandbox: { provider: "slow-read" },
      },
      plugins: [scripted, slow.plugin, sandboxPlugin],
      cwd,
      env: {},
      discover: false,
    });
    cleanups.push(() => client.close());
    const abort = new AbortController();
    const run = client.chat("look at the picture", { threadId: "t1", signal: abort.signal }).catch((e: unknown) => e);
    await slow.started;
    abort.abort();
    // Cancelled while the read is blocked: the run's end waits for the read, so nothing is released yet.
    await new Promise((r) => setTimeout(r, 200));
    expect(slow.log).toEqual(["read-start"]);
    slow.openGate();
    const failure = (await run) as { code?: string };
    expect(failure.code).toBe("ANTLER_ERR_RUN_CANCELLED");
    expect(slow.log).toEqual(["read-start", "read-end", "release"]);
  });
});
