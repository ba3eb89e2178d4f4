import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { captureLogs } from "@antler/kernel/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createFolderRemote,
  type FolderRemote,
  loadManifest,
  type OutputSyncOptions,
  type RemoteSandbox,
  SANDBOX_SYNC_LEDGER_FILE,
  type SyncLimits,
  syncOutputs,
} from "../src/index.js";

const OUT = "/mnt/user-data/outputs";
const roomy: SyncLimits = { maxFileBytes: 1 << 20, maxTotalBytes: 1 << 24, maxFiles: 1000, deadlineMs: 60_000 };

let root: string;
let hostDir: string;
let manifestPath: string;
let reads: string[];
let folder: FolderRemote;
let clock: { t: number; perRead: number };

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "antler-e2b-sync-"));
  hostDir = join(root, "thread", "user-data", "outputs");
  manifestPath = join(root, "thread", ".e2b-sync.json");
  reads = [];
  clock = { t: 0, perRead: 0 };
  folder = createFolderRemote({
    root: join(root, "remote"),
    beforeRead: (path) => {
      reads.push(path);
      clock.t += clock.perRead;
    },
  });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function newSandbox(): Promise<RemoteSandbox> {
  return folder.create({ timeoutMs: 60_000 });
}

async function put(sb: RemoteSandbox, rel: string, content: string | Uint8Array): Promise<void> {
  await sb.writeFile(`${OUT}/${rel}`, typeof content === "string" ? new TextEncoder().encode(content) : content);
}

function remoteHost(sb: RemoteSandbox, rel: string): string {
  return join(folder.sandboxDir(sb.sandboxId), "mnt", "user-data", "outputs", ...rel.split("/"));
}

function sync(sb: RemoteSandbox, extra: Partial<OutputSyncOptions> = {}) {
  reads.length = 0;
  return syncOutputs({ remote: sb, hostDir, manifestPath, limits: roomy, now: () => clock.t, ...extra });
}

async function hostText(rel: string): Promise<string | null> {
  return readFile(join(hostDir, ...rel.split("/")), "utf8").catch(() => null);
}

describe("syncOutputs over a real folder", () => {
  it("downloads every file on the first pass and records remote version and host metadata", async () => {
    const sb = await newSandbox();
    await put(sb, "report.md", "# hello\n");
    await put(sb, "charts/plot.bin", new Uint8Array([0, 1, 2, 255]));

    const report = await sync(sb);

    expect(report.complete).toBe(true);
    expect(report.downloaded).toEqual(["charts/plot.bin", "report.md"]);
    expect(await hostText("report.md")).toBe("# hello\n");
    expect(new Uint8Array(await readFile(join(hostDir, "charts", "plot.bin")))).toEqual(new Uint8Array([0, 1, 2, 255]));
    const loaded = await loadManifest(manifestPath, sb.sandboxId);
    if (loaded.status !== "ok") throw new Error(`manifest not ok: ${loaded.status}`);
    const entry = loaded.manifest.files["report.md"];
    const remoteStat = await stat(remoteHost(sb, "report.md"));
    const hostStat = await stat(join(hostDir, "report.md"));
    expect(entry?.remote).toEqual({ size: 8, mtimeMs: remoteStat.mtimeMs });
    expect(entry?.host.size).toBe(8);
    expect(entry?.host.mtimeMs).toBe(hostStat.mtimeMs);
    expect(entry?.host.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(entry?.created).toBe(true);
  });

  it("downloads nothing on an unchanged second pass, even when the host rounds mtimes", async () => {
    const sb = await newSandbox();
    await put(sb, "a.txt", "alpha");
    await put(sb, "b/c.txt", "gamma");
    // Sub-second remote mtimes, which a coarse host filesystem cannot store.
    await utimes(remoteHost(sb, "a.txt"), 1_700_000_000.123, 1_700_000_000.123);
    await utimes(remoteHost(sb, "b/c.txt"), 1_700_000_001.987, 1_700_000_001.987);
    await sync(sb);

    // The host filesystem keeps whole seconds only.
    for (const rel of ["a.txt", "b/c.txt"]) {
      const path = join(hostDir, ...rel.split("/"));
      const secs = Math.floor((await stat(path)).mtimeMs / 1000);
      await utimes(path, secs, secs);
      expect((await stat(path)).mtimeMs % 1000).toBe(0);
    }

    const second = await sync(sb);
    expect(reads).toEqual([]);
    expect(second.downloaded).toEqual([]);
    expect(second.unchanged).toEqual(["a.txt", "b/c.txt"]);

    // The recorded host metadata now is the rounded one, so the next pass is decided on stat alone.
    const loaded = await loadManifest(manifestPath, sb.sandboxId);
    if (loaded.status !== "ok") throw new Error("manifest missing");
    expect((loaded.manifest.files["a.txt"]?.host.mtimeMs ?? 1) % 1000).toBe(0);
    const third = await sync(sb);
    expect(reads).toEqual([]);
    expect(third.downloaded).toEqual([]);
  });

  it("re-downloads a file changed remotely, including a same-size change", async () => {
    const sb = await newSandbox();
    await put(sb, "a.txt", "one");
    await put(sb, "b.txt", "keep");
    await sync(sb);

    await put(sb, "a.txt", "two");
    await utimes(remoteHost(sb, "a.txt"), new Date(Date.now() + 5000), new Date(Date.now() + 5000));
    const report = await sync(sb);

    expect(report.downloaded).toEqual(["a.txt"]);
    expect(reads).toEqual([`${OUT}/a.txt`]);
    expect(await hostText("a.txt")).toBe("two");
  });

  it("prunes a remotely deleted file on a complete listing, deleting only host copies the sync created", async () => {
    const sb = await newSandbox();
    await put(sb, "gone.txt", "bye");
    await put(sb, "edited.txt", "original");
    await put(sb, "nested/deep.txt", "deep");
    await put(sb, "stay.txt", "stay");
    await sync(sb);
    await writeFile(join(hostDir, "edited.txt"), "changed on the host");
    await writeFile(join(hostDir, "mine.txt"), "written on the host");

    await sb.remove(`${OUT}/gone.txt`);
    await sb.remove(`${OUT}/edited.txt`);
    await sb.remove(`${OUT}/nested`);
    const report = await sync(sb);

    expect(report.complete).toBe(true);
    expect(report.pruned.sort()).toEqual(["edited.txt", "gone.txt", "nested/deep.txt"]);
    expect(await hostText("gone.txt")).toBeNull();
    expect(await hostText("nested/deep.txt")).toBeNull();
    await expect(stat(join(hostDir, "nested"))).rejects.toThrow();
    expect(await hostText("edited.txt")).toBe("changed on the host");
    expect(await hostText("mine.txt")).toBe("written on the host");
    expect(await hostText("stay.txt")).toBe("stay");
    const loaded = await loadManifest(manifestPath, sb.sandboxId);
    if (loaded.status !== "ok") throw new Error("manifest missing");
    expect(Object.keys(loaded.manifest.files)).toEqual(["stay.txt"]);
  });

  it("stops a pass at the deadline, leaves the manifest un-pruned, and the next pass finishes", async () => {
    const sb = await newSandbox();
    await put(sb, "old.txt", "stale");
    await sync(sb);
    await sb.remove(`${OUT}/old.txt`);
    await put(sb, "a.txt", "a");
    await put(sb, "b.txt", "b");
    await put(sb, "c.txt", "c");

    // Each read costs 100 ms on the injected clock; the budget is 150 ms.
    clock.t = 0;
    clock.perRead = 100;
    const { logger, lines } = captureLogs();
    const first = await sync(sb, { limits: { ...roomy, deadlineMs: 150 }, logger });

    expect(first.complete).toBe(false);
    expect(first.downloaded).toEqual(["a.txt", "b.txt"]);
    expect(first.dropped).toEqual([{ path: "c.txt", reason: "deadline" }]);
    expect(first.pruned).toEqual([]);
    expect(await hostText("c.txt")).toBeNull();
    expect(await hostText("old.txt")).toBe("stale");
    const warning = lines.find((l) => l.level === "warn" && Array.isArray(l.dropped));
    expect(warning?.dropped).toEqual(["c.txt"]);
    expect(String(warning?.msg)).toContain("c.txt");
    const mid = await loadManifest(manifestPath, sb.sandboxId);
    if (mid.status !== "ok") throw new Error("manifest missing");
    expect(Object.keys(mid.manifest.files).sort()).toEqual(["a.txt", "b.txt", "old.txt"]);

    clock.t = 0;
    const second = await sync(sb, { limits: { ...roomy, deadlineMs: 150 } });
    expect(second.complete).toBe(true);
    expect(second.downloaded).toEqual(["c.txt"]);
    expect(second.unchanged).toEqual(["a.txt", "b.txt"]);
    expect(second.pruned).toEqual(["old.txt"]);
    expect(await hostText("c.txt")).toBe("c");
    expect(await hostText("old.txt")).toBeNull();
  });

  it("drops a read that hangs past the deadline instead of waiting for it", async () => {
    const hanging = createFolderRemote({
      root: join(root, "remote-hang"),
      beforeRead: (path, signal) =>
        path.endsWith("slow.txt")
          ? new Promise<void>((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason), { once: true }))
          : undefined,
    });
    const sb = await hanging.create({ timeoutMs: 60_000 });
    await put(sb, "fast.txt", "fast");
    await put(sb, "slow.txt", "slow");

    const started = Date.now();
    // 1.5 s leaves a loaded machine time to copy fast.txt within the deadline; slow.txt never arrives.
    const report = await syncOutputs({ remote: sb, hostDir, manifestPath, limits: { ...roomy, deadlineMs: 1_500 } });

    // The hanging read never ends: returning at all is the deadline at work; the bound leaves room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(report.downloaded).toEqual(["fast.txt"]);
    expect(report.dropped).toEqual([{ path: "slow.txt", reason: "deadline" }]);
    expect(report.complete).toBe(false);
  });

  it("truncates a pass by total bytes, logs the dropped files, and catches up on the next pass", async () => {
    const sb = await newSandbox();
    for (const name of ["a.bin", "b.bin", "c.bin"]) await put(sb, name, new Uint8Array(40).fill(7));
    const { logger, lines } = captureLogs();

    const first = await sync(sb, { limits: { ...roomy, maxTotalBytes: 100 }, logger });
    expect(first.downloaded).toEqual(["a.bin", "b.bin"]);
    expect(first.bytes).toBe(80);
    expect(first.dropped).toEqual([{ path: "c.bin", reason: "max_total_bytes" }]);
    expect(first.complete).toBe(false);
    expect(lines.some((l) => l.level === "warn" && JSON.stringify(l.dropped) === JSON.stringify(["c.bin"]))).toBe(true);

    const second = await sync(sb, { limits: { ...roomy, maxTotalBytes: 100 } });
    expect(second.downloaded).toEqual(["c.bin"]);
    expect(second.complete).toBe(true);
  });

  it("truncates a pass by file count and keeps unreached manifest entries", async () => {
    const sb = await newSandbox();
    await put(sb, "z-old.txt", "old");
    await sync(sb);
    await sb.remove(`${OUT}/z-old.txt`);
    for (const name of ["a.txt", "b.txt", "c.txt"]) await put(sb, name, name);
    const { logger, lines } = captureLogs();

    const first = await sync(sb, { limits: { ...roomy, maxFiles: 2 }, logger });
    expect(first.downloaded).toEqual(["a.txt", "b.txt"]);
    expect(first.dropped).toEqual([{ path: "c.txt", reason: "max_files" }]);
    expect(first.pruned).toEqual([]);
    expect(await hostText("z-old.txt")).toBe("old");
    expect(lines.some((l) => l.level === "warn" && String(l.msg).includes("c.txt: max_files"))).toBe(true);

    const second = await sync(sb, { limits: { ...roomy, maxFiles: 2 } });
    expect(second.downloaded).toEqual(["c.txt"]);
    expect(second.pruned).toEqual(["z-old.txt"]);
    expect(await hostText("z-old.txt")).toBeNull();
  });

  it("never downloads a file over the per-file cap, without blocking the rest of the pass", async () => {
    const sb = await newSandbox();
    await put(sb, "big.bin", new Uint8Array(200));
    await put(sb, "small.txt", "ok");
    const { logger, lines } = captureLogs();

    const report = await sync(sb, { limits: { ...roomy, maxFileBytes: 100 }, logger });

    expect(report.tooLarge).toEqual(["big.bin"]);
    expect(report.downloaded).toEqual(["small.txt"]);
    expect(reads).toEqual([`${OUT}/small.txt`]);
    expect(report.complete).toBe(true);
    expect(await hostText("big.bin")).toBeNull();
    expect(lines.some((l) => l.level === "warn" && String(l.msg).includes("big.bin"))).toBe(true);
  });

  it("discards a manifest bound to another sandbox id and leaves that sandbox's host copies alone", async () => {
    const first = await newSandbox();
    await put(first, "shared.txt", "v1");
    await put(first, "only-first.txt", "first");
    await sync(first);

    const second = await newSandbox();
    await put(second, "shared.txt", "v1");
    const report = await sync(second);

    expect(report.manifestDiscarded).toBe("other_sandbox");
    expect(report.downloaded).toEqual(["shared.txt"]);
    expect(report.pruned).toEqual([]);
    expect(await hostText("only-first.txt")).toBe("first");
    const loaded = await loadManifest(manifestPath, second.sandboxId);
    if (loaded.status !== "ok") throw new Error("manifest missing");
    expect(loaded.manifest.sandboxId).toBe(second.sandboxId);
    expect(Object.keys(loaded.manifest.files)).toEqual(["shared.txt"]);
    // shared.txt existed on the host before this sandbox wrote it, so a later prune must not delete it.
    expect(loaded.manifest.files["shared.txt"]?.created).toBe(false);
  });

  it("keeps the manifest when the remote outputs folder cannot be listed", async () => {
    const sb = await newSandbox();
    await put(sb, "a.txt", "a");
    await sync(sb);
    const before = await readFile(manifestPath, "utf8");
    await sb.remove(OUT);

    const report = await sync(sb);

    expect(report.listError).toBeDefined();
    expect(report.pruned).toEqual([]);
    expect(await readFile(manifestPath, "utf8")).toBe(before);
    expect(await hostText("a.txt")).toBe("a");
  });

  it("does not follow a host symlink planted in the outputs folder", async () => {
    const sb = await newSandbox();
    await put(sb, "link.txt", "payload");
    const outside = join(root, "outside.txt");
    await writeFile(outside, "untouched");
    await mkdir(hostDir, { recursive: true });
    const { symlink } = await import("node:fs/promises");
    await symlink(outside, join(hostDir, "link.txt"));

    const report = await sync(sb);

    expect(report.unsafe).toEqual(["link.txt"]);
    expect(await readFile(outside, "utf8")).toBe("untouched");
  });

  it("records each synced file's generation and SHA-256 in the thread's ledger, keeping an earlier generation's files", async () => {
    const ledgerPath = join(root, "thread", SANDBOX_SYNC_LEDGER_FILE);
    const first = await newSandbox();
    await put(first, "a.txt", "from the first VM");
    await put(first, "gone.txt", "deleted later");
    await sync(first, { ledgerPath });
    await first.remove(`${OUT}/gone.txt`);
    await sync(first, { ledgerPath });

    // The VM is replaced: the new one makes b.txt and knows nothing of a.txt, whose host copy stays.
    const second = await newSandbox();
    await put(second, "b.txt", "from the second VM");
    await sync(second, { ledgerPath });

    const ledger = JSON.parse(await readFile(ledgerPath, "utf8"));
    const sha = (text: string) => createHash("sha256").update(text).digest("hex");
    expect(ledger).toEqual({
      version: 1,
      files: {
        [`${OUT}/a.txt`]: { sha256: sha("from the first VM"), size: 17, generation: first.sandboxId },
        [`${OUT}/b.txt`]: { sha256: sha("from the second VM"), size: 18, generation: second.sandboxId },
      },
    });
  });
});
