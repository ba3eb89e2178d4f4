import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CodePlugin, definePlugin, type KernelConfigInput, threadPaths } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { captureLogs, type Script, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import { afterEach } from "vitest";
import { z } from "zod";
import type { GatewayConfigInput } from "../src/config.js";
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
}

/** A real gateway on an ephemeral loopback port over a scripted model, closed after the test. */
export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const baseDir = tempDir();
  const scripted = scriptedModelsPlugin({ m: options.script ?? [{ text: "Hello from the gateway." }] });
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
