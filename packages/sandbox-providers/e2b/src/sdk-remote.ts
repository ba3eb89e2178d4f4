import type { EntryInfo, Sandbox } from "e2b";
import type { E2BRemote, RemoteEntry, RemoteInfo, RemoteRunResult, RemoteSandbox } from "./remote.js";

type Sdk = Pick<typeof import("e2b"), "Sandbox" | "CommandExitError" | "FileType" | "TimeoutError">;

export interface SdkRemoteOptions {
  apiKey: string;
  /** Control-plane API base URL; the SDK's default is `https://api.<domain>`. */
  apiUrl?: string | undefined;
  /** In-sandbox API (envd) base URL; normally derived from the sandbox id and domain. */
  sandboxUrl?: string | undefined;
  domain?: string | undefined;
  /** Per HTTP request, milliseconds. */
  requestTimeoutMs?: number | undefined;
}

/**
 * The thin adapter over the `e2b` SDK. It translates shapes and nothing else: no retries, no policy. Every
 * option is passed explicitly so that the SDK's own environment lookups (E2B_API_KEY, E2B_DOMAIN) cannot
 * silently override the plugin config.
 */
export function createSdkRemote(options: SdkRemoteOptions): E2BRemote {
  // The SDK loads with the first remote call, not with the plugin entry.
  let loaded: Promise<Sdk> | undefined;
  const sdk = () => (loaded ??= import("e2b"));
  const connection = {
    apiKey: options.apiKey,
    ...(options.apiUrl !== undefined ? { apiUrl: options.apiUrl } : {}),
    ...(options.sandboxUrl !== undefined ? { sandboxUrl: options.sandboxUrl } : {}),
    ...(options.domain !== undefined ? { domain: options.domain } : {}),
    ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
  };
  return {
    async create(create) {
      const e2b = await sdk();
      const sandbox = await e2b.Sandbox.create({
        ...connection,
        ...(create.template !== undefined ? { template: create.template } : {}),
        timeoutMs: create.timeoutMs,
        ...(create.metadata !== undefined ? { metadata: { ...create.metadata } } : {}),
        ...(create.signal !== undefined ? { signal: create.signal } : {}),
      });
      return wrapSandbox(sandbox, e2b);
    },
    async connect(sandboxId, connect) {
      const e2b = await sdk();
      const sandbox = await e2b.Sandbox.connect(sandboxId, {
        ...connection,
        ...(connect?.timeoutMs !== undefined ? { timeoutMs: connect.timeoutMs } : {}),
        ...(connect?.signal !== undefined ? { signal: connect.signal } : {}),
      });
      return wrapSandbox(sandbox, e2b);
    },
    async kill(sandboxId) {
      return (await sdk()).Sandbox.kill(sandboxId, connection);
    },
    async find(metadata, find) {
      // GET /v2/sandboxes?metadata=<k=v&...>&state=running, following the x-next-token pages.
      const pages = (await sdk()).Sandbox.list({
        ...connection,
        query: { metadata: { ...metadata }, state: ["running"] },
        ...(find?.signal !== undefined ? { signal: find.signal } : {}),
      });
      const found: Array<{ id: string; startedAt: number }> = [];
      while (pages.hasNext) {
        for (const info of await pages.nextItems()) found.push({ id: info.sandboxId, startedAt: info.startedAt.getTime() });
      }
      return found.sort((a, b) => b.startedAt - a.startedAt).map((f) => f.id);
    },
  };
}

function wrapSandbox(sandbox: Sandbox, { CommandExitError, FileType, TimeoutError }: Sdk): RemoteSandbox {
  return {
    sandboxId: sandbox.sandboxId,
    async run(command, run = {}): Promise<RemoteRunResult> {
      try {
        const result = await sandbox.commands.run(command, {
          ...(run.timeoutMs !== undefined ? { timeoutMs: run.timeoutMs } : {}),
          ...(run.env !== undefined ? { envs: { ...run.env } } : {}),
          ...(run.cwd !== undefined ? { cwd: run.cwd } : {}),
          ...(run.user !== undefined ? { user: run.user } : {}),
          ...(run.signal !== undefined ? { signal: run.signal } : {}),
        });
        return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr, timedOut: false };
      } catch (err) {
        // The SDK throws for a non-zero exit; the contract treats that as an ordinary result.
        if (err instanceof CommandExitError) return { exitCode: err.exitCode, stdout: err.stdout, stderr: err.stderr, timedOut: false };
        if (err instanceof TimeoutError) return { exitCode: null, stdout: "", stderr: err.message, timedOut: true };
        throw err;
      }
    },
    readFile(path, read) {
      return sandbox.files.read(path, { format: "bytes", ...(read?.signal !== undefined ? { signal: read.signal } : {}) });
    },
    async writeFile(path, bytes) {
      await sandbox.files.write(path, new Uint8Array(bytes).buffer);
    },
    async list(path, depth) {
      const entries = await sandbox.files.list(path, { depth });
      return entries.map((entry) => toRemoteEntry(entry, FileType));
    },
    remove(path) {
      return sandbox.files.remove(path);
    },
    async getInfo(): Promise<RemoteInfo> {
      const info = await sandbox.getInfo();
      return { sandboxId: info.sandboxId, templateId: info.templateId, state: info.state, startedAt: info.startedAt, endAt: info.endAt };
    },
    kill() {
      return sandbox.kill();
    },
  };
}

function toRemoteEntry(entry: EntryInfo, FileType: Sdk["FileType"]): RemoteEntry {
  const type = entry.type === FileType.DIR ? "dir" : entry.type === FileType.SYMLINK || entry.symlinkTarget ? "symlink" : "file";
  return { path: entry.path, type, size: entry.size, mtimeMs: entry.modifiedTime ? entry.modifiedTime.getTime() : null };
}
