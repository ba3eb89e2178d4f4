import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { CliIO, Kernel } from "@antler/kernel";

export interface RecordedHit {
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

export interface TestSite {
  readonly origin: string;
  readonly port: number;
  readonly hits: RecordedHit[];
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A loopback HTTP server that records every request and answers from `routes` (404 otherwise). */
export async function startSite(routes: Record<string, Handler | string>): Promise<TestSite> {
  const hits: RecordedHit[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const path = req.url ?? "/";
      hits.push({ method: req.method ?? "GET", path, body });
      const route = routes[path.split("?")[0] ?? path];
      if (route === undefined) {
        res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      } else if (typeof route === "string") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(route);
      } else {
        route(req, res, body);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function html(body: string, title = "Test page"): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;
}

/** Pids of processes whose command line contains `marker` (Linux /proc). */
export function processesWithMarker(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmdline.includes(marker)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** Polls until `fn` is true or the time is up. */
export async function eventually(fn: () => boolean, timeoutMs = 20_000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (fn()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return fn();
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Runs a plugin CLI command of `kernel` and returns its exit code and output. */
export async function runCommand(
  kernel: Kernel,
  name: string,
  args: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const command = kernel.commands.find((c) => c.name === name);
  if (!command) throw new Error(`no command "${name}"; have: ${kernel.commands.map((c) => c.name).join(", ")}`);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  stderr.on("data", (d: Buffer) => (err += d.toString()));
  const io: CliIO = { stdout, stderr, cwd: process.cwd(), env: {}, kernel };
  const code = await command.run(args, io);
  return { code, stdout: out, stderr: err };
}

export interface DebuggableChromium {
  /** The browser's DevTools WebSocket URL (`ws://127.0.0.1:<port>/devtools/browser/<id>`). */
  readonly wsUrl: string;
  /** `http://127.0.0.1:<port>`, what `cdp_url` takes. */
  readonly httpUrl: string;
  running(): boolean;
  close(): Promise<void>;
}

/** Starts a headless Chromium with a DevTools port of its own: the "already running" browser of CDP and remote tests. */
export async function startDebuggableChromium(executablePath: string): Promise<DebuggableChromium> {
  const profile = mkdtempSync(join(tmpdir(), "antler-cdp-"));
  const child = spawn(
    executablePath,
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--no-first-run",
      "--remote-debugging-port=0",
      `--user-data-dir=${profile}`,
      "about:blank",
    ],
    // Its own process group, so closing it also ends the helper processes that write the profile.
    { stdio: ["ignore", "ignore", "pipe"], detached: true },
  );
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      process.kill(-(child.pid as number), "SIGKILL");
      await exited;
    }
    // Chromium's helper processes may still be writing the profile for a moment after the main one exits.
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  };
  try {
    const wsUrl = await new Promise<string>((resolve, reject) => {
      let err = "";
      const timer = setTimeout(() => reject(new Error(`no DevTools URL from chromium: ${err}`)), 20_000);
      child.once("exit", (code) => reject(new Error(`chromium exited (${code}): ${err}`)));
      child.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
        const found = /DevTools listening on (ws:\/\/\S+)/.exec(err);
        if (found?.[1]) {
          clearTimeout(timer);
          resolve(found[1]);
        }
      });
    });
    return { wsUrl, httpUrl: `http://${new URL(wsUrl).host}`, running: () => child.exitCode === null && child.signalCode === null, close };
  } catch (err) {
    await close();
    throw err;
  }
}

export interface BrowserlessStandIn {
  /** `ws://127.0.0.1:<port>`: what `remote.endpoint` takes. */
  readonly endpoint: string;
  /** Every WebSocket upgrade it received: the path, its `token` parameter, and whether it was let through. */
  readonly upgrades: Array<{ path: string; token: string | null; accepted: boolean }>;
  close(): Promise<void>;
}

/**
 * A loopback stand-in for browserless: a WebSocket endpoint that answers 401 unless the `token` query parameter
 * is `token` (as browserless does), and otherwise relays the connection to `browser`'s DevTools socket.
 */
export async function startBrowserlessStandIn(browser: DebuggableChromium, token: string): Promise<BrowserlessStandIn> {
  const upgrades: BrowserlessStandIn["upgrades"] = [];
  const target = new URL(browser.wsUrl);
  const sockets = new Set<Socket>();
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  server.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    const url = new URL(req.url ?? "/", "http://stand-in");
    const given = url.searchParams.get("token");
    const accepted = given === token;
    upgrades.push({ path: url.pathname, token: given, accepted });
    if (!accepted) {
      socket.end("HTTP/1.1 401 Unauthorized\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nInvalid API key\n");
      return;
    }
    const upstream = connect(Number(target.port), target.hostname, () => {
      const lines = [`GET ${target.pathname} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i] ?? "";
        if (name.toLowerCase() !== "host") lines.push(`${name}: ${req.rawHeaders[i + 1] ?? ""}`);
      }
      lines.push(`Host: ${target.host}`);
      upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (head.length) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    upgrades,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
