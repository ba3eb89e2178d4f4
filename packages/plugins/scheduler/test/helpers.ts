import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, type Kernel, type KernelConfigInput } from "@antler/kernel";
import { createTestKernel, type ScriptedChatModel, type ScriptedStep, scriptedModelsPlugin } from "@antler/kernel/testing";
import schedulerPlugin, { type OccurrenceRunner, Scheduler, type SchedulerConfigInput, schedulerConfigSchema } from "../src/index.js";

export interface Clock {
  now: Date;
  advance(ms: number): void;
}

export function clock(start = new Date()): Clock {
  const c = {
    now: new Date(Math.floor(start.getTime() / 1000) * 1000),
    advance(ms: number) {
      c.now = new Date(c.now.getTime() + ms);
    },
  };
  return c;
}

export function tempDir(prefix = "antler-scheduler-"): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Runtime context each model call ran with, recorded by a middleware (the model itself records its tools). */
export function contextRecorder(): { plugin: ReturnType<typeof definePlugin>; contexts: Array<Record<string, unknown>> } {
  const contexts: Array<Record<string, unknown>> = [];
  const plugin = definePlugin({
    name: "@antler/test-context-recorder",
    version: "0.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.middleware.add({
        name: "RecordContext",
        wrapModelCall: (request, handler) => {
          contexts.push({ ...(request.runtime?.context ?? {}) });
          return handler(request);
        },
      });
    },
  });
  return { plugin, contexts };
}

export interface Harness {
  kernel: Kernel & { logs: Array<Record<string, unknown>> };
  model(): ScriptedChatModel;
  contexts: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** A started kernel with a scripted model named `scripted`, the context recorder and the scheduler plugin. */
export async function harness(options: {
  baseDir: string;
  storage?: KernelConfigInput["storage"];
  respond?: (callIndex: number) => ScriptedStep | Promise<ScriptedStep>;
  scheduler?: SchedulerConfigInput;
}): Promise<Harness> {
  const models = scriptedModelsPlugin({ scripted: { respond: (_m, i) => options.respond?.(i) ?? { text: "done" } } });
  const recorder = contextRecorder();
  const kernel = await createTestKernel({
    builtins: true,
    plugins: [models, recorder.plugin, { plugin: schedulerPlugin, config: options.scheduler ?? {} }],
    config: {
      base_dir: options.baseDir,
      models: [{ name: "scripted", provider: "scripted" }],
      // Titles would be extra model calls; these tests count calls.
      title: { enabled: false },
      ...(options.storage ? { storage: options.storage } : {}),
    },
    cwd: options.baseDir,
  });
  return {
    kernel,
    model: () => {
      const model = models.models.get("scripted");
      if (!model) throw new Error("the scripted model was never created (no run happened)");
      return model;
    },
    contexts: recorder.contexts,
    close: () => kernel.close(),
  };
}

/** A scheduler over the harness kernel with an injected clock (what the plugin builds, minus the real clock). */
export function schedulerFor(
  h: Harness,
  c: Clock | undefined,
  options: { config?: SchedulerConfigInput; instanceId?: string; runner?: OccurrenceRunner } = {},
): Scheduler {
  return new Scheduler({
    kernel: h.kernel,
    config: schedulerConfigSchema.parse(options.config ?? {}),
    logger: h.kernel.logger,
    instanceId: options.instanceId,
    runner: options.runner,
    ...(c ? { now: () => c.now } : {}),
  });
}

/** A promise with its resolve function, for runners that block until the test lets them finish. */
export function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 20_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
