import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
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
