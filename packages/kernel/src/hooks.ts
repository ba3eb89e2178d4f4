import diagnosticsChannel from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";
import { AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncHook } from "tapable";
import { AntlerError, ErrorCodes } from "./errors.js";
import type { MiddlewareAssemblyContext, MiddlewareEntry } from "./pipeline/types.js";
import type { ToolAssemblyContext, ToolEntry } from "./tools.js";
import { getCurrentTraceId } from "./trace.js";

/**
 * Named stages order taps on a hook; within a stage, taps run in plugin load order (dependencies first).
 * For `assembleTools` the stages carry the DeerFlow assembly order: config tools `first`, built-ins `early`,
 * MCP `normal`, ACP `late`, subagent tools `last`.
 */
export const STAGES = { first: -200, early: -100, normal: 0, late: 100, last: 200 } as const;
export type StageName = keyof typeof STAGES;

export function stageNumber(stage: StageName | undefined, where: string): number {
  if (stage === undefined) return 0;
  const n = STAGES[stage];
  if (n === undefined) {
    throw new AntlerError(ErrorCodes.HOOK_INVALID_STAGE, `unknown hook stage "${String(stage)}"`, {
      where,
      hint: `Use one of: ${Object.keys(STAGES).join(", ")}.`,
    });
  }
  return n;
}

export interface RunInfo {
  readonly runId: string;
  readonly traceId: string;
  readonly threadId: string | undefined;
  readonly userId: string | undefined;
}

export type RunOutcome = "success" | "error" | "cancelled";

export interface KernelHooks {
  /** After every plugin's setup ran; synchronous. */
  readonly boot: SyncHook<[]>;
  /** `kernel.start()`: taps run in stage order; a failure stops the ones already started, in reverse. */
  readonly start: AsyncSeriesHook<[]>;
  /** `kernel.close()`: taps run in reverse stage order; every tap runs even if an earlier one fails. */
  readonly stop: AsyncSeriesHook<[]>;
  readonly assembleTools: AsyncSeriesWaterfallHook<[ToolEntry[], ToolAssemblyContext]>;
  readonly assembleMiddleware: AsyncSeriesWaterfallHook<[MiddlewareEntry[], MiddlewareAssemblyContext]>;
  readonly runStart: AsyncSeriesHook<[RunInfo]>;
  readonly runEnd: AsyncSeriesHook<[RunInfo, RunOutcome]>;
  readonly runError: AsyncSeriesHook<[RunInfo, unknown]>;
}

export type HookName = keyof KernelHooks;

/** Published once per tap invocation on `node:diagnostics_channel` under this name. */
export const HOOK_TIMING_CHANNEL = "antler:hook";

export interface HookTiming {
  hook: HookName;
  plugin: string;
  stage: number;
  durationMs: number;
  ok: boolean;
  traceId: string | null;
}

export type HookTimingListener = (timing: HookTiming) => void;

export function createKernelHooks(onTiming: HookTimingListener): KernelHooks {
  const hooks: KernelHooks = {
    boot: new SyncHook<[]>([], "boot"),
    start: new AsyncSeriesHook<[]>([], "start"),
    stop: new AsyncSeriesHook<[]>([], "stop"),
    assembleTools: new AsyncSeriesWaterfallHook<[ToolEntry[], ToolAssemblyContext]>(["tools", "context"], "assembleTools"),
    assembleMiddleware: new AsyncSeriesWaterfallHook<[MiddlewareEntry[], MiddlewareAssemblyContext]>(
      ["middleware", "context"],
      "assembleMiddleware",
    ),
    runStart: new AsyncSeriesHook<[RunInfo]>(["run"], "runStart"),
    runEnd: new AsyncSeriesHook<[RunInfo, RunOutcome]>(["run", "outcome"], "runEnd"),
    runError: new AsyncSeriesHook<[RunInfo, unknown]>(["run", "error"], "runError"),
  };
  const channel = diagnosticsChannel.channel(HOOK_TIMING_CHANNEL);
  for (const [name, hook] of Object.entries(hooks) as Array<[HookName, KernelHooks[HookName]]>) {
    // One interceptor per hook, installed before any tap, wraps every tap's function: every plugin gets
    // timing and attribution without opting in.
    hook.intercept({
      name: "antler:timing",
      register(tap) {
        const fn = tap.fn as (...args: unknown[]) => unknown;
        const report = (started: number, ok: boolean) => {
          const timing: HookTiming = {
            hook: name,
            plugin: tap.name,
            stage: tap.stage ?? 0,
            durationMs: performance.now() - started,
            ok,
            traceId: getCurrentTraceId(),
          };
          if (channel.hasSubscribers) channel.publish(timing);
          onTiming(timing);
        };
        if (tap.type === "promise") {
          tap.fn = async (...args: unknown[]) => {
            const started = performance.now();
            try {
              const result = await fn(...args);
              report(started, true);
              return result;
            } catch (err) {
              report(started, false);
              throw err;
            }
          };
        } else if (tap.type === "async") {
          tap.fn = (...args: unknown[]) => {
            const started = performance.now();
            const callback = args.pop() as (err?: unknown, result?: unknown) => void;
            return fn(...args, (err?: unknown, result?: unknown) => {
              report(started, !err);
              callback(err, result);
            });
          };
        } else {
          tap.fn = (...args: unknown[]) => {
            const started = performance.now();
            try {
              const result = fn(...args);
              report(started, true);
              return result;
            } catch (err) {
              report(started, false);
              throw err;
            }
          };
        }
        return tap;
      },
    });
  }
  return Object.freeze(hooks);
}
