import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
  return startEverythingOnFreePort("streamableHttp", "listening on port", "/mcp");
}

/**
 * server-everything listens on the port in $PORT and cannot be told to take any free one (port 0). A free port
 * found here can still be taken by another process before the server binds it, so a start that fails with
 * EADDRINUSE is retried on a fresh port.
 */
async function startEverythingOnFreePort(mode: string, needle: string, path: string): Promise<{ url: string; child: ChildProcess }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(process.execPath, [EVERYTHING, mode], {
      env: { ...process.env, PORT: String(port) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      await waitForOutput(child, needle);
      return { url: `http://127.0.0.1:${port}${path}`, child };
    } catch (err) {
      await stopProcess(child);
      if (attempt >= 5 || !/EADDRINUSE|already in use/.test(String(err))) throw err;
    }
  }
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

/** A stdio MCP server whose `meta` tool returns the `_meta` it received (JSON). */
export const META_ECHO_SERVER = fileURLToPath(new URL("./fixtures/meta-echo-server.mjs", import.meta.url));

/** Starts server-everything in legacy SSE mode (GET /sse, POST /message) and resolves once it listens. */
export async function startEverythingSse(): Promise<{ url: string; child: ChildProcess }> {
  return startEverythingOnFreePort("sse", "running on port", "/sse");
}

async function waitForOutput(child: ChildProcess, needle: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen in 30 s: ${out}`)), 30_000);
    const onData = (chunk: Buffer) => {
      out += String(chunk);
      if (out.includes(needle)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr?.on("data", onData);
    child.stdout?.on("data", onData);
    // "close" rather than "exit": it comes after the output is read, so the error names the cause (e.g. EADDRINUSE).
    child.once("close", (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited with ${code}: ${out}`));
    });
  });
}

export interface RecordingProxy {
  /** The proxy's origin, e.g. `http://127.0.0.1:1234`; paths are forwarded unchanged. */
  readonly origin: string;
  /** Headers of every request received, in order. */
  readonly requests: Array<{ method: string; path: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy in front of `target` that records request headers. With `requireBearer`, a request
 * whose Authorization is not `Bearer <one of the accepted tokens>` gets 401 and is not forwarded.
 */
export async function startRecordingProxy(target: string, requireBearer?: () => readonly string[]): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const requests: RecordingProxy["requests"] = [];
  const server = createHttpServer((req, res) => {
    requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers });
    if (requireBearer && !requireBearer().some((t) => req.headers.authorization === `Bearer ${t}`)) {
      res.writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" }).end('{"error":"unauthorized"}');
      return;
    }
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    forward.on("error", () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${address.port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
