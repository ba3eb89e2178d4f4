import { AntlerError, type AntlerTool, ErrorCodes, type MiddlewareSpec } from "@antler/kernel";
import type { z } from "zod";
import { FifoAdmissionRuntime } from "./admission.js";
import { type SubagentsSection, subagentsPluginConfigSchema, subagentsSectionSchema } from "./config.js";
import type { AdmissionRuntime, SubagentRunner } from "./contract.js";
import { subagentLimitSpec } from "./limit.js";
import { createTaskTool } from "./task-tool.js";
import { type SubagentType, SubagentTypeRegistry } from "./types.js";

export interface BindSubagentsOptions {
  /** Runs each subagent: your own `SubagentRunner`, or a `KernelSubagentRunner` of some kernel. */
  runner: SubagentRunner;
  /** The `subagents:` section as in config.yaml (`custom_agents`, `timeout_seconds`, the task caps). */
  section?: z.input<typeof subagentsSectionSchema>;
  /** The plugin's config as in `plugins[i].config` (`runtime`, `verification`, built-in `agents` overrides). */
  config?: z.input<typeof subagentsPluginConfigSchema>;
  /** Whether the `bash` built-in type is offered (only where bash runs isolated, or by the operator's choice). Default false. */
  bashAllowed?: boolean;
  /** An admission runtime to share (e.g. with batches); by default a new FIFO one sized by `config.runtime`. */
  admission?: AdmissionRuntime;
}

/** The `task` tool and its limit middleware bound to one runner, for an agent built without a kernel. */
export interface BoundSubagents {
  /** `[task]`: pass to `createAntlerAgent({ subagents })` (or with your own tools). */
  readonly tools: readonly AntlerTool[];
  /** `[SubagentLimit]`: caps `task` calls per response and per run, as `subagents.max_concurrent` / `max_total_per_run`. */
  readonly middleware: readonly MiddlewareSpec[];
  /** The types the lead is offered, in order. */
  readonly types: readonly SubagentType[];
  readonly admission: AdmissionRuntime;
  /** Closes the admission runtime when this binding made it (rejects queued subagents, aborts running ones). */
  close(): Promise<void>;
}

function parsed<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = [where, ...(issue?.path ?? []).map(String)].join(".");
  throw new AntlerError(ErrorCodes.CONFIG_INVALID, `bindSubagents: ${path}: ${issue?.message ?? "invalid"}`, {
    where: "bindSubagents",
    hint: `Fix ${where} as you would the same keys in config.yaml (see the @antler/plugin-subagents README).`,
  });
}

/**
 * Subagents for an agent built in code, with no kernel: the `task` tool bound to `runner`, the types from the
 * caller's own config (built-ins and `custom_agents`), and the per-response / per-run caps. The runner decides how a
 * subagent runs; `task` validates the type, admits the run, streams `task_*` events and reports the outcome as it
 * does in a kernel.
 */
export function bindSubagents(options: BindSubagentsOptions): BoundSubagents {
  const section: SubagentsSection = parsed(subagentsSectionSchema, options.section, "section");
  const config = parsed(subagentsPluginConfigSchema, options.config, "config");
  const receiptsEnabled = config.verification.receipts_enabled;
  const registry = new SubagentTypeRegistry(
    { kernelConfig: { subagents: section } as never, pluginConfig: config, receiptsEnabled },
    () => options.bashAllowed === true,
  );
  const owned = options.admission === undefined;
  const admission =
    options.admission ?? new FifoAdmissionRuntime({ maxRunning: config.runtime.max_running, maxQueued: config.runtime.max_queued });
  const types = registry.list();
  return {
    tools: [createTaskTool({ runner: options.runner, admission, types, receiptsEnabled })],
    middleware: [subagentLimitSpec({ maxPerResponse: section.max_concurrent, maxPerRun: section.max_total_per_run })],
    types,
    admission,
    close: async () => {
      if (owned) await admission.close();
    },
  };
}
