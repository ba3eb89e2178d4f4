import type { AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncHook } from "tapable";
import { AntlerError, ErrorCodes } from "./errors.js";
import type { MiddlewareAssemblyContext, MiddlewareEntry } from "./pipeline/types.js";
import type { ToolAssemblyContext, ToolEntry } from "./tools.js";

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

/** How a run ended; `paused`: it stopped for a person (an approval) and a resume continues it under its run id. */
export type RunOutcome = "success" | "error" | "cancelled" | "paused";

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
