import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { type CodePlugin, definePlugin, type KernelConfigInput, threadPaths } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { captureLogs, type Script, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient, type AntlerClientOptions } from "@antler/plugin-runtime";
import { afterEach } from "vitest";
import { z } from "zod";
import type { GatewayConfigInput } from "../src/config.js";
import { CALLER_DATA_LIMITS } from "../src/request-limits.js";
import { type RunningGateway, type StartGatewayOptions, startGateway } from "../src/server.js";

export const ALICE_KEY = "alice-key-0123456789abcdef";
export const BOB_KEY = "bob-key-0123456789abcdef01";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

export function tempDir(prefix = "antler-gateway-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A tool that writes `/mnt/user-data/outputs/<name>` for the run's user and thread (what a sandbox would do). */
export function reportTools(baseDir: string) {
  return definePlugin({
    name: "report-tools",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.tools.add(
        defineTool({
          name: "write_report",
          description: "Writes a report file to the outputs folder.",
          schema: z.object({ name: z.string(), text: z.string() }),
          run: ({ name, text }, runtime) => {
            const context = (runtime as unknown as { context: Record<string, string> }).context;
            const paths = threadPaths(baseDir, context.user_id as string, context.thread_id as string);
            mkdirSync(paths.outputs, { recursive: true });
            writeFileSync(join(paths.outputs, name), text);
            return `wrote /mnt/user-data/outputs/${name}`;
          },
        }),
      );
    },
  });
}

export interface TestGateway extends RunningGateway {
  client: AntlerClient;
  baseDir: string;
  logs: Array<Record<string, unknown>>;
  /** fetch against the gateway with alice's key unless `key` is given (null: no key). */
  call(path: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<Response>;
}

export interface TestGatewayOptions {
  script?: Script;
  config?: Partial<GatewayConfigInput>;
  kernelConfig?: KernelConfigInput;
  plugins?: CodePlugin[];
  gateway?: Partial<StartGatewayOptions>;
  /** Client options the gateway's `runs:` config would set (`antler serve` builds the client from them). */
  client?: Pick<AntlerClientOptions, "maxActiveRuns" | "runLeases">;
}

/** A real gateway on an ephemeral loopback port over a scripted model, closed after the test. */
export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const baseDir = tempDir();
  const scripted = scriptedModelsPlugin({ m: options.script ?? { respond: () => ({ text: "Hello from the gateway." }) } });
  const captured = captureLogs({ level: "info" });
  const client = await AntlerClient.create({
    config: {
      base_dir: baseDir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "memory" },
      title: { enabled: false },
      ...options.kernelConfig,
    },
    plugins: [scripted, reportTools(baseDir), ...(options.plugins ?? [])],
    cwd: baseDir,
    env: {},
    discover: false,
    logger: captured.logger,
    ...options.client,
  });
  const starting = startGateway({
    client,
    config: {
      port: 0,
      auth: {
        mode: "api_keys",
        api_keys: [
          { key: ALICE_KEY, user: "alice" },
          { key: BOB_KEY, user: "bob" },
        ],
      },
      cors: { allow_origins: ["http://app.example"] },
      ...options.config,
    },
    shutdownGraceMs: 1000,
    ...options.gateway,
  });
  // A gateway that fails to start still owns a client: close it, so a failing test leaks nothing.
  const gateway = await starting.catch(async (err: unknown) => {
    await client.close();
    throw err;
  });
  cleanups.push(async () => {
    await gateway.close();
    await client.close();
  });
  const call: TestGateway["call"] = (path, init = {}) => {
    const { key = ALICE_KEY, json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (key !== null) headers.set("authorization", `Bearer ${key}`);
    if (json !== undefined) headers.set("content-type", "application/json");
    return fetch(`${gateway.url}${path}`, { ...rest, headers, ...(json === undefined ? {} : { body: JSON.stringify(json) }) });
  };
  return Object.assign(gateway, { client, baseDir, logs: captured.lines, call });
}

export interface SseFrame {
  event: string;
  data: unknown;
  id?: string;
}

/** Reads an SSE body frame by frame, as a browser EventSource would split it. */
export async function* readSse(response: Response): AsyncGenerator<SseFrame> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      const frame: Partial<SseFrame> & { dataText?: string } = {};
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const [field, ...rest] = line.split(":");
        const text = rest.join(":").replace(/^ /, "");
        if (field === "event") frame.event = text;
        else if (field === "data") frame.dataText = (frame.dataText === undefined ? "" : `${frame.dataText}\n`) + text;
        else if (field === "id") frame.id = text;
      }
      if (frame.dataText === undefined) continue;
      yield { event: frame.event ?? "message", data: JSON.parse(frame.dataText), ...(frame.id ? { id: frame.id } : {}) };
    }
  }
}

export async function collectSse(response: Response): Promise<SseFrame[]> {
  const frames: SseFrame[] = [];
  for await (const frame of readSse(response)) frames.push(frame);
  return frames;
}

/** `total` bytes in `chunkSize` pieces, made as they are pulled: a body that never exists in memory at once. */
export async function* generatedBody(total: number, options: { chunkSize?: number; head?: string; tail?: string } = {}) {
  const chunkSize = options.chunkSize ?? 64 * 1024;
  if (options.head) yield Buffer.from(options.head);
  const chunk = Buffer.alloc(chunkSize, 0x61);
  for (let sent = 0; sent < total; sent += chunkSize) yield sent + chunkSize <= total ? chunk : chunk.subarray(0, total - sent);
  if (options.tail) yield Buffer.from(options.tail);
}

export interface StreamedAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Bytes handed to the socket before the answer came. */
  sentBytes: number;
  /** Milliseconds from the moment the bytes sent passed `limitBytes` to the answer (0 if it came first). */
  msAfterLimit: number;
}

/**
 * Sends a body from an async iterable with node:http (chunked unless `content-length` is set), honouring
 * back-pressure, and resolves with the first answer, which may come long before the body is sent; then it
 * stops sending and drops the connection.
 */
export function sendStreamed(
  url: string,
  options: { method?: string; headers: Record<string, string>; body: AsyncIterable<Uint8Array>; limitBytes: number; timeoutMs?: number },
): Promise<StreamedAnswer> {
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    let passedAt: number | undefined;
    let answered = false;
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${options.timeoutMs ?? 20_000} ms (${sentBytes} bytes sent)`));
    }, options.timeoutMs ?? 20_000);
    const req = httpRequest(url, { method: options.method ?? "POST", headers: options.headers });
    req.on("response", (response) => {
      answered = true;
      const answeredAt = performance.now();
      const parts: Buffer[] = [];
      response.on("data", (c: Buffer) => parts.push(c));
      const finish = () => {
        clearTimeout(timer);
        req.destroy();
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(parts).toString("utf8"),
          sentBytes,
          msAfterLimit: passedAt === undefined ? 0 : answeredAt - passedAt,
        });
      };
      response.on("end", finish);
      response.on("error", finish);
    });
    // Once the server has answered it may close its end while we still send: that is expected.
    req.on("error", (error) => {
      if (!answered) {
        clearTimeout(timer);
        reject(error);
      }
    });
    void (async () => {
      for await (const chunk of options.body) {
        if (answered || req.destroyed) return;
        sentBytes += chunk.byteLength;
        if (passedAt === undefined && sentBytes > options.limitBytes) passedAt = performance.now();
        if (!req.write(chunk)) {
          await new Promise<void>((r) => {
            const done = () => {
              req.off("drain", done);
              req.off("response", done);
              req.off("close", done);
              r();
            };
            req.on("drain", done);
            req.on("response", done);
            req.on("close", done);
          });
        }
      }
      if (!answered && !req.destroyed) req.end();
    })().catch(() => undefined);
  });
}

/** Samples RSS (this process's unless `readRss` says otherwise) until stopped; returns the largest growth, in bytes. */
export function watchRss(readRss: () => number = () => process.memoryUsage.rss(), intervalMs = 20): { stop(): number } {
  const start = readRss();
  let peak = start;
  const timer = setInterval(() => {
    peak = Math.max(peak, readRss());
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, readRss());
      return peak - start;
    },
  };
}

/** The resident set size of another process, in bytes (Linux: /proc/<pid>/status). */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? "0") * 1024;
}

export interface RawAnswer {
  status: number;
  headers: Map<string, string[]>;
  body: string;
  /** The server closed the connection after answering. */
  closed: boolean;
}

/** Writes raw bytes to the gateway and reads everything until the server closes (or 3 s pass). */
export function rawRequest(url: string, bytes: string | Buffer, timeoutMs = 3000): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("latin1");
      const split = text.indexOf("\r\n\r\n");
      if (split === -1) return reject(new Error(`no HTTP answer; got ${JSON.stringify(text)}`));
      const [statusLine = "", ...lines] = text.slice(0, split).split("\r\n");
      const headers = new Map<string, string[]>();
      for (const line of lines) {
        const at = line.indexOf(":");
        const name = line.slice(0, at).trim().toLowerCase();
        headers.set(name, [...(headers.get(name) ?? []), line.slice(at + 1).trim()]);
      }
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body: text.slice(split + 4), closed });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      finish();
    }, timeoutMs);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("end", () => {
      closed = true;
      socket.destroy();
      finish();
    });
    socket.on("error", () => finish());
  });
}

export function nested(depth: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

export function wide(keys: number, valueLength = 1): Record<string, string> {
  return Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, "v".repeat(valueLength)]));
}

/**
 * The most work a caller object can ask for within CALLER_DATA_LIMITS: every top-level key, strings of the
 * longest length up to the byte limit, the rest of the entries as short items one level down.
 */
export function largestCallerData(): Record<string, unknown> {
  const l = CALLER_DATA_LIMITS;
  const out: Record<string, unknown> = { list: Array.from({ length: l.max_entries - l.max_keys }, () => 1) };
  for (let i = 1; i < l.max_keys; i++) out[`key_${String(i).padStart(3, "0")}`] = "v";
  for (const key of Object.keys(out)) {
    if (key === "list") continue;
    const longer = { ...out, [key]: "v".repeat(l.max_string_length) };
    if (Buffer.byteLength(JSON.stringify(longer)) > l.max_bytes) break;
    out[key] = longer[key];
  }
  return out;
}

/**
 * Serves `client` on a loopback port with alice's API key, and registers closing the gateway and then the client
 * in `cleanups`. A gateway that fails to start closes the client before the error is rethrown.
 */
export async function serveAsAlice(
  client: AntlerClient,
  cleanups: Array<() => Promise<void>>,
  config: Partial<GatewayConfigInput> = {},
): Promise<RunningGateway> {
  const gateway = await startGateway({
    client,
    config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: ALICE_KEY, user: "alice" }] }, ...config },
    shutdownGraceMs: 1000,
  }).catch(async (error: unknown) => {
    await client.close();
    throw error;
  });
  cleanups.push(async () => {
    await gateway.close();
    await client.close();
  });
  return gateway;
}

/**
 * A client on `storage` with one scripted model `m` (in a temp folder), served to Alice on loopback; its folder,
 * client and gateway go into `cleanups`.
 */
export async function serveScriptedAsAlice(
  storage: NonNullable<KernelConfigInput["storage"]>,
  cleanups: Array<() => Promise<void>>,
  options: { script: Script; prefix?: string; checkpointer?: AntlerClientOptions["checkpointer"] },
): Promise<{ client: AntlerClient; gateway: RunningGateway; call: ReturnType<typeof callAsAlice> }> {
  const dir = mkdtempSync(join(tmpdir(), options.prefix ?? "antler-gw-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const client = await AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted" }],
      storage,
      title: { enabled: false },
      logging: { level: "error" },
    },
    plugins: [scriptedModelsPlugin({ m: options.script })],
    cwd: dir,
    env: {},
    discover: false,
    ...(options.checkpointer ? { checkpointer: options.checkpointer } : {}),
  });
  const gateway = await serveAsAlice(client, cleanups);
  return { client, gateway, call: callAsAlice(gateway) };
}

/** fetch against `gateway` with alice's key; `json` becomes the body. */
export function callAsAlice(gateway: RunningGateway): (path: string, init?: RequestInit & { json?: unknown }) => Promise<Response> {
  return (path, init = {}) => {
    const { json, ...rest } = init;
    const headers = new Headers(rest.headers);
    headers.set("authorization", `Bearer ${ALICE_KEY}`);
    if (json !== undefined) headers.set("content-type", "application/json");
    return fetch(`${gateway.url}${path}`, { ...rest, headers, ...(json === undefined ? {} : { body: JSON.stringify(json) }) });
  };
}
