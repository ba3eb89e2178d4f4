import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WorkspaceScan } from "../src/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A workspace of `n` text files, and an empty folder the scans make their caches in. */
function fixture(n: number) {
  const root = mkdtempSync(join(tmpdir(), "antler-ws-cancel-"));
  dirs.push(root);
  const workspace = join(root, "workspace");
  const caches = join(root, "caches");
  mkdirSync(workspace);
  mkdirSync(caches);
  for (let i = 0; i < n; i++) writeFileSync(join(workspace, `f${String(i).padStart(3, "0")}.txt`), `line ${i}\n`);
  return { roots: { workspace }, caches };
}

function logs() {
  const entries: Array<{ msg: string; obj: Record<string, unknown> }> = [];
  const push = (obj: object, msg?: string) => entries.push({ obj: obj as Record<string, unknown>, msg: msg ?? "" });
  return { entries, logger: { info: push, warn: push } };
}

const until = async (check: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe("workspace scan cancellation (seed 004)", () => {
  it("cancelling a text scan after the handoff waits for the worker to finish, then removes the cache; no cache file is left", async () => {
    const { roots, caches } = fixture(40);
    const scan = WorkspaceScan.start({ roots, includeText: true, cacheParent: caches, limits: { delayPerFileMs: 10 } });
    await until(() => scan.stage === "running");
    const cache = scan.cacheFolder as string;
    await until(() => readdirSync(cache).length > 0);
    let workerFinished = false;
    void scan.outcome.then(() => {
      workerFinished = true;
    });
    expect(workerFinished).toBe(false);
    await scan.cancel();
    expect(workerFinished).toBe(true);
    // Drained: the worker had finished writing before the folder went, so nothing can recreate it.
    const finished = await scan.outcome;
    expect(finished).toEqual({ status: "cancelled", stage: "running" });
    expect(existsSync(cache)).toBe(false);
    await new Promise((r) => setTimeout(r, 50));
    expect(readdirSync(caches)).toEqual([]);
  });

  it("cancelling a metadata scan returns at once (before any macrotask) while the worker is busy; its outcome is logged by the completion callback", async () => {
    const { roots, caches } = fixture(40);
    const { entries, logger } = logs();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const scan = WorkspaceScan.start({ roots, includeText: false, cacheParent: caches, logger, limits: { delayPerFileMs: 10 } });
      await until(() => scan.stage === "running");
      let settled = false;
      void scan.outcome.then(() => {
        settled = true;
      });
      // No clock: cancel must settle before the event loop turns even once (no wait for the worker, no I/O), so a
      // loaded machine cannot fail this, and a cancel that drains the worker cannot pass it.
      const first = await Promise.race([
        scan.cancel().then(() => "cancel returned"),
        new Promise((r) => setImmediate(() => r("a macrotask ran first"))),
      ]);
      expect(first).toBe("cancel returned");
      expect(settled).toBe(false);
      // A metadata scan owns no cache.
      expect(readdirSync(caches)).toEqual([]);
      await until(() => entries.some((e) => /metadata scan finished in the background/.test(e.msg)));
      const logged = entries.find((e) => /metadata scan finished/.test(e.msg));
      // The worker ran on after the cancel and scanned everything; its result was consumed, not lost.
      expect(logged?.obj.outcome).toMatchObject({ status: "done", count: 40 });
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("cancelling during the prepare stage reclaims the roots: no worker starts and the prepared cache is removed", async () => {
    const { roots, caches } = fixture(5);
    const scan = WorkspaceScan.start({ roots, includeText: true, cacheParent: caches });
    expect(scan.stage).toBe("prepare");
    await scan.cancel();
    expect(await scan.outcome).toEqual({ status: "cancelled", stage: "prepare" });
    expect(scan.workerStarted).toBe(false);
    expect(readdirSync(caches)).toEqual([]);
  });

  it("a scan over the file limit says it is truncated", async () => {
    const { roots } = fixture(12);
    const scan = WorkspaceScan.start({ roots, includeText: false, limits: { maxFiles: 10 } });
    const outcome = await scan.outcome;
    expect(outcome).toMatchObject({ status: "done", count: 10, truncated: "more than 10 files" });
  });
});
