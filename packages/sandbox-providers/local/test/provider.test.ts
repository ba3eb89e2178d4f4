import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCodes, threadPaths } from "@antler/kernel";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LocalSandboxProvider, localSandboxId } from "../src/index.js";

describe("LocalSandboxProvider", () => {
  let baseDir: string;
  let provider: LocalSandboxProvider | undefined;

  beforeEach(async () => {
    baseDir = await mkdtemp(join(tmpdir(), "antler-local-provider-"));
  });

  afterEach(async () => {
    await provider?.close();
    provider = undefined;
    await rm(baseDir, { recursive: true, force: true });
  });

  it("is the non-isolating provider with id local", () => {
    provider = new LocalSandboxProvider({ baseDir });
    expect(provider.id).toBe("local");
    expect(provider.isolated).toBe(false);
  });

  it("names sandboxes local:<user>/<thread>, one per (user, thread)", async () => {
    provider = new LocalSandboxProvider({ baseDir });
    expect((await provider.acquire("t1", { userId: "default" })).id).toBe("local:default/t1");
    expect((await provider.acquire("t1", { userId: "bob" })).id).toBe("local:bob/t1");
    expect(localSandboxId("bob", "t1")).toBe("local:bob/t1");
  });

  it("creates the thread's workspace, uploads and outputs folders on acquire", async () => {
    provider = new LocalSandboxProvider({ baseDir });
    await provider.acquire("t1", { userId: "bob" });
    const paths = threadPaths(baseDir, "bob", "t1");
    for (const dir of [paths.workspace, paths.uploads, paths.outputs]) expect((await stat(dir)).isDirectory()).toBe(true);
  });

  it("on a thread whose folders were never made (they are made lazily, at first write), writes and runs land in them", async () => {
    provider = new LocalSandboxProvider({ baseDir });
    const paths = threadPaths(baseDir, "bob", "fresh");
    await expect(stat(paths.userData)).rejects.toMatchObject({ code: "ENOENT" });
    const sandbox = await provider.acquire("fresh", { userId: "bob" });
    await sandbox.writeFile("/mnt/user-data/outputs/report.md", "# done");
    expect(await readFile(join(paths.outputs, "report.md"), "utf8")).toBe("# done");
    await sandbox.writeFile("/mnt/user-data/workspace/notes/a.txt", "a");
    expect(await readFile(join(paths.workspace, "notes", "a.txt"), "utf8")).toBe("a");
  });

  it("keeps at most maxSandboxes live, dropping the least recently acquired", async () => {
    provider = new LocalSandboxProvider({ baseDir, maxSandboxes: 2 });
    const a = await provider.acquire("a", { userId: "default" });
    const b = await provider.acquire("b", { userId: "default" });
    await provider.acquire("a", { userId: "default" }); // a is now the most recent
    const c = await provider.acquire("c", { userId: "default" });
    expect(provider.size).toBe(2);
    expect(provider.get(b.id)).toBeUndefined();
    expect(provider.get(a.id)).toBe(a);
    expect(provider.get(c.id)).toBe(c);
    // An evicted sandbox is forgotten, not broken: whoever still holds it can keep using it.
    await b.writeFile("/mnt/user-data/workspace/still.txt", "works");
    expect(await b.readFile("/mnt/user-data/workspace/still.txt")).toBe("works");
  });

  it("shares one sandbox between concurrent acquires of one thread", async () => {
    provider = new LocalSandboxProvider({ baseDir });
    const [x, y] = await Promise.all([provider.acquire("t", { userId: "default" }), provider.acquire("t", { userId: "default" })]);
    expect(x).toBe(y);
  });

  it("refuses acquire after close with SANDBOX_UNAVAILABLE", async () => {
    provider = new LocalSandboxProvider({ baseDir });
    await provider.close();
    await expect(provider.acquire("t", { userId: "default" })).rejects.toMatchObject({ code: ErrorCodes.SANDBOX_UNAVAILABLE });
  });

  it("refuses acquire with an aborted signal", async () => {
    provider = new LocalSandboxProvider({ baseDir });
    await expect(provider.acquire("t", { userId: "default", signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: ErrorCodes.RUN_CANCELLED,
    });
  });

  it("rejects a maxSandboxes that is not a positive integer", () => {
    expect(() => new LocalSandboxProvider({ baseDir, maxSandboxes: 0 })).toThrow(
      expect.objectContaining({ code: ErrorCodes.CONFIG_INVALID }),
    );
  });
});
