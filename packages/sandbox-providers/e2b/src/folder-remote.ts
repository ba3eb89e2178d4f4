import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { lstat, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, posix, relative, resolve, sep } from "node:path";
import { AntlerError, ErrorCodes, isWithin } from "@antler/kernel";
import type { E2BRemote, RemoteEntry, RemoteRunResult, RemoteSandbox } from "./remote.js";

export interface FolderRemoteOptions {
  /** Host folder under which each remote sandbox gets its own folder, `<root>/<sandboxId>/`. */
  root: string;
  /** Plays the part of the E2B template: fills a new sandbox's folder before it is handed out. */
  template?: (sandboxDir: string) => Promise<void> | void;
  /** Called before every file read with the remote path (a test can advance a clock or stall here). */
  beforeRead?: (path: string, signal: AbortSignal | undefined) => Promise<void> | void;
}

export interface FolderRemote extends E2BRemote {
  /** Host folder standing in for the remote sandbox `sandboxId` (its `/` is this folder). */
  sandboxDir(sandboxId: string): string;
  /** Ids of sandboxes currently alive. */
  liveIds(): string[];
}

const MAPPED_PREFIX = "/mnt/";

/**
 * An `E2BRemote` over a real host folder: real files, real bytes, real mtimes. Remote path `/x/y` is
 * `<root>/<id>/x/y`. Commands run on the host through `sh -c` with `/mnt/...` rewritten into the sandbox
 * folder; that is enough for the bootstrap and simple shell work, and it is NOT isolation. Tests only.
 */
export function createFolderRemote(options: FolderRemoteOptions): FolderRemote {
  const root = resolve(options.root);
  const live = new Set<string>();
  const labels = new Map<string, Readonly<Record<string, string>>>();

  const attach = (sandboxId: string): RemoteSandbox => {
    const dir = join(root, sandboxId);
    const host = (path: string): string => {
      if (!live.has(sandboxId)) {
        throw new AntlerError(ErrorCodes.SANDBOX_NOT_FOUND, `folder sandbox ${sandboxId} is not running`, { where: "e2b folder remote" });
      }
      const target = resolve(dir, `.${posix.resolve("/", path)}`);
      if (!isWithin(dir, target))
        throw new AntlerError(ErrorCodes.PATH_UNSAFE, `path ${path} leaves the sandbox`, { where: "e2b folder remote" });
      return target;
    };
    const toRemote = (hostPath: string): string => `/${relative(dir, hostPath).split(sep).join("/")}`;

    return {
      sandboxId,
      async run(command, run = {}) {
        host("/");
        const rewrite = (text: string): string => text.split(MAPPED_PREFIX).join(`${dir}${MAPPED_PREFIX}`);
        const cwd = run.cwd !== undefined ? host(run.cwd) : dir;
        // ...and back, so output (pwd, ls, error messages) names remote paths as a real sandbox would.
        const unrewrite = (text: string): string => text.split(`${dir}${MAPPED_PREFIX}`).join(MAPPED_PREFIX);
        const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, ...run.env };
        const result = await runShell(rewrite(command), cwd, env, run.timeoutMs, run.signal);
        return { ...result, stdout: unrewrite(result.stdout), stderr: unrewrite(result.stderr) };
      },
      async readFile(path, read) {
        const target = host(path);
        await options.beforeRead?.(path, read?.signal);
        read?.signal?.throwIfAborted();
        return new Uint8Array(await readFile(target));
      },
      async writeFile(path, bytes) {
        const target = host(path);
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, bytes);
      },
      async list(path, depth) {
        const base = host(path);
        const out: RemoteEntry[] = [];
        const walk = async (folder: string, level: number): Promise<void> => {
          for (const dirent of await readdir(folder, { withFileTypes: true })) {
            const full = join(folder, dirent.name);
            const info = await lstat(full);
            const type = info.isSymbolicLink() ? "symlink" : info.isDirectory() ? "dir" : "file";
            out.push({ path: toRemote(full), type, size: info.size, mtimeMs: info.mtimeMs });
            if (type === "dir" && level < depth) await walk(full, level + 1);
          }
        };
        await walk(base, 1);
        return out;
      },
      async remove(path) {
        await rm(host(path), { recursive: true, force: true });
      },
      async getInfo() {
        host("/");
        const info = await stat(dir);
        return { sandboxId, templateId: "folder", state: "running", startedAt: info.birthtime, endAt: new Date(8.64e15) };
      },
      async kill() {
        return killById(sandboxId);
      },
    };
  };

  const killById = async (sandboxId: string): Promise<boolean> => {
    const existed = live.delete(sandboxId);
    await rm(join(root, sandboxId), { recursive: true, force: true });
    return existed;
  };

  return {
    async create(create) {
      const sandboxId = `folder-${randomUUID().slice(0, 12)}`;
      labels.set(sandboxId, { ...(create.metadata ?? {}) });
      const dir = join(root, sandboxId);
      await mkdir(dir, { recursive: true });
      await options.template?.(dir);
      live.add(sandboxId);
      return attach(sandboxId);
    },
    async connect(sandboxId) {
      if (!live.has(sandboxId)) {
        throw new AntlerError(ErrorCodes.SANDBOX_NOT_FOUND, `folder sandbox ${sandboxId} is not running`, { where: "e2b folder remote" });
      }
      return attach(sandboxId);
    },
    kill: killById,
    async find(metadata) {
      const matches = (id: string) => Object.entries(metadata).every(([k, v]) => labels.get(id)?.[k] === v);
      return [...live].filter(matches).reverse();
    },
    sandboxDir: (sandboxId) => join(root, sandboxId),
    liveIds: () => [...live],
  };
}

function runShell(
  command: string,
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number | undefined,
  signal: AbortSignal | undefined,
): Promise<RemoteRunResult> {
  return new Promise((resolvePromise, reject) => {
    // Own process group, so a timeout kills the whole command tree and not only `sh`.
    const child = spawn("sh", ["-c", command], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const timer =
      timeoutMs !== undefined
        ? setTimeout(() => {
            timedOut = true;
            killGroup();
          }, timeoutMs)
        : undefined;
    const onAbort = (): void => killGroup();
    signal?.addEventListener("abort", onAbort, { once: true });
    child.on("error", (err) => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      reject(err);
    });
    child.on("close", (code) => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolvePromise({ exitCode: timedOut ? null : code, stdout, stderr, timedOut });
    });
  });
}
