import diagnosticsChannel from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";
import { AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncHook } from "tapable";
import { HOOK_TIMING_CHANNEL, type HookName, type HookTiming, type KernelHooks, type RunInfo, type RunOutcome } from "./hooks.js";
import type { MiddlewareAssemblyContext, MiddlewareEntry } from "./pipeline/types.js";
import type { ToolAssemblyContext, ToolEntry } from "./tools.js";
import { getCurrentTraceId } from "./trace.js";

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
