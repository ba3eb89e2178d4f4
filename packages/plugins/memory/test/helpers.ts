import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KernelConfigInput } from "@antler/kernel";
import { captureLogs, type ScriptedChatModel, type ScriptFunction, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import memoryPlugin, { MEMORY, MemoryClient, type MemoryConfigInput, type MemoryService } from "../src/index.js";

export function tempDir(prefix = "antler-memory-"): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface Harness {
  client: AntlerClient;
  memory: MemoryClient;
  service: MemoryService;
  /** The model the agent talks to. */
  chat(): ScriptedChatModel;
  /** The model that extracts facts (undefined until the first extraction). */
  extractor(): ScriptedChatModel | undefined;
  logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** A started client over real SQLite (or the given storage) with scripted `chat` and `extractor` models. */
export async function harness(options: {
  baseDir: string;
  memory?: MemoryConfigInput;
  chat?: ScriptFunction;
  extractor?: ScriptFunction;
  storage?: KernelConfigInput["storage"];
  userId?: string;
}): Promise<Harness> {
  const models = scriptedModelsPlugin({
    chat: { respond: options.chat ?? ((messages) => ({ text: `ok: ${messages.at(-1)?.text ?? ""}` })) },
    extractor: { respond: options.extractor ?? (() => ({ text: '{"add": []}' })) },
  });
  const captured = captureLogs({ level: "debug" });
  const client = await AntlerClient.create({
    plugins: [models, memoryPlugin],
    config: {
      base_dir: options.baseDir,
      models: [
        { name: "chat", provider: "scripted" },
        { name: "extractor", provider: "scripted" },
      ],
      default_model: "chat",
      // Titles would be extra calls of the chat model; these tests count calls.
      title: { enabled: false },
      memory: { model: "extractor", debounce_ms: 200, ...(options.memory ?? {}) },
      ...(options.storage ? { storage: options.storage } : {}),
    } as KernelConfigInput,
    cwd: options.baseDir,
    env: {},
    discover: false,
    logger: captured.logger,
    userId: options.userId ?? "alice",
  });
  const service = client.kernel.scope.resolve(MEMORY);
  return {
    client,
    service,
    memory: new MemoryClient(client, { userId: options.userId ?? "alice" }),
    chat: () => {
      const model = models.models.get("chat");
      if (!model) throw new Error("the chat model was never created (no run happened)");
      return model;
    },
    extractor: () => models.models.get("extractor"),
    logs: captured.lines,
    close: () => client.close(),
  };
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 15_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The extraction reply a model would give: JSON for `add` facts (and optional profile). */
export function extractionReply(
  add: Array<{ content: string; category?: string; confidence?: number }>,
  profile?: Record<string, string>,
): string {
  return JSON.stringify({
    ...(profile ? { profile } : {}),
    add: add.map((a) => ({ category: "context", confidence: 0.9, ...a })),
  });
}
