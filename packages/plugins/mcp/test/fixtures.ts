import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Entry point of @modelcontextprotocol/server-everything (a devDependency of this package). */
export const EVERYTHING = fileURLToPath(new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));

export function everythingStdio() {
  return { transport: "stdio" as const, command: process.execPath, args: [EVERYTHING, "stdio"] };
}

const dirs: string[] = [];
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "antler-mcp-"));
  dirs.push(dir);
  return dir;
}
export function removeTempDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Starts server-everything in streamable HTTP mode and resolves once it listens. */
export async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen: ${out}`)), 20_000);
    const onData = (chunk: Buffer) => {
      out += String(chunk);
      if (out.includes("listening on port")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr?.on("data", onData);
    child.stdout?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited with ${code}: ${out}`));
    });
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 3000).unref();
  });
}

/** Whether a process with this pid is still alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * This monorepo's vitest runs Node with the "source" export condition, and eventsource-parser publishes its
 * TypeScript under that condition, so the SDK's HTTP transport would `require` a .ts file. Point that
 * resolution at the package's built CommonJS file instead (test-only; production Node has no such condition).
 */
export function useBuiltEventsourceParser(): void {
  const sdkRequire = createRequire(
    fileURLToPath(new URL("../node_modules/@modelcontextprotocol/sdk/dist/cjs/client/streamableHttp.js", import.meta.url)),
  );
  const resolved = sdkRequire.resolve("eventsource-parser/stream");
  if (!resolved.endsWith(".ts")) return;
  const built = join(dirname(resolved), "..", "dist", "stream.cjs");
  sdkRequire(built);
  const cached = sdkRequire.cache[built];
  if (cached) sdkRequire.cache[resolved] = cached;
}
