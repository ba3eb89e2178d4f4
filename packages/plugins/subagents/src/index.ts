import { type CliIO, definePlugin, KERNEL, type ToolAssemblyContext } from "@antler/kernel";
import { FifoAdmissionRuntime } from "./admission.js";
import { type SubagentsSection, subagentsConfigSections, subagentsPluginConfigSchema } from "./config.js";
import { ADMISSION_RUNTIME, type AdmissionRuntime, SUBAGENT_RUNNER, type SubagentRunner } from "./contract.js";
import { subagentLimitMiddleware } from "./limit.js";
import { KernelSubagentRunner } from "./runner.js";
import { createTaskTool } from "./task-tool.js";
import { formatTypes, SubagentTypeRegistry } from "./types.js";

export {
  ADMISSION_REJECTED,
  AdmissionRejectedError,
  type FifoAdmissionOptions,
  FifoAdmissionRuntime,
  isAdmissionRejected,
} from "./admission.js";
export { RESULT_BRIEF_CHARS, resultBrief } from "./brief.js";
export { type SubagentsPluginConfig, type SubagentsSection, subagentsConfigSections, subagentsPluginConfigSchema } from "./config.js";
export * from "./contract.js";
export {
  checkCriterion,
  commandMatches,
  criteriaBlock,
  evaluateAcceptance,
  type FileProbe,
  findTestSummary,
  MAX_CRITERIA,
  MAX_CRITERION_CHARS,
  type NormalizedCriteria,
  normalizeCriteria,
  overallVerdict,
  type ParsedCriterion,
  parseCriterion,
  type TestSummary,
} from "./criteria.js";
export {
  LIMIT_FLAG,
  SUBAGENT_LIMIT_MIDDLEWARE_NAME,
  type SubagentLimitOptions,
  subagentLimitMiddleware,
  subagentLimitSpec,
} from "./limit.js";
export {
  bashExitCode,
  canonicalJson,
  formatReceipt,
  RECEIPTS_MIDDLEWARE_NAME,
  ReceiptRecorder,
  receiptsMiddleware,
  sha256,
} from "./receipts.js";
export { EXECUTION_CONTEXT_KEY, KernelSubagentRunner, type KernelSubagentRunnerOptions, stopReasonOf } from "./runner.js";
export {
  createTaskTool,
  formatTaskResult,
  TASK_EVENT_TYPES,
  TASK_TOOL_NAME,
  type TaskToolDeps,
  taskResultKwargs,
  taskSchema,
  taskToolDescription,
} from "./task-tool.js";
export { TURN_CAP_MIDDLEWARE_NAME, turnCapMiddleware } from "./turn-cap.js";
export { ALWAYS_DENIED, formatTypes, type SubagentType, SubagentTypeRegistry } from "./types.js";

/**
 * `@antler/plugin-subagents`: the `task` tool (when `subagents.enabled`), the SubagentLimit middleware, and the
 * process-wide services other plugins build on: `SUBAGENT_RUNNER` and `ADMISSION_RUNTIME`.
 */
export default definePlugin({
  name: "@antler/plugin-subagents",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Subagents: the task tool with receipts and acceptance criteria, the SubagentLimit middleware and the admission runtime.",
  configSchema: subagentsPluginConfigSchema,
  configSections: subagentsConfigSections,
  setup(ctx) {
    const config = ctx.config;
    const section = ctx.kernelConfig.subagents as SubagentsSection;
    const receiptsEnabled = config.verification.receipts_enabled;
    // Whether `bash` may run is the sandbox provider's call (isolation) or the operator's (allow_host_bash).
    const bashAllowed = () => {
      if (ctx.kernelConfig.sandbox.allow_host_bash) return true;
      try {
        return ctx.sandbox.provider().isolated;
      } catch {
        return false;
      }
    };
    const types = new SubagentTypeRegistry({ kernelConfig: ctx.kernelConfig, pluginConfig: config, receiptsEnabled }, bashAllowed);

    // Singletons built on first use and disposed (close) with the kernel.
    ctx.provide(ADMISSION_RUNTIME, {
      useFactory: (): AdmissionRuntime =>
        new FifoAdmissionRuntime({ maxRunning: config.runtime.max_running, maxQueued: config.runtime.max_queued }),
    });
    ctx.provide(SUBAGENT_RUNNER, {
      useFactory: (scope): SubagentRunner =>
        new KernelSubagentRunner({
          kernel: scope.resolve(KERNEL),
          types,
          receiptsEnabled,
          cancelGraceMs: Math.round(config.cancel_grace_seconds * 1000),
          logger: ctx.logger,
        }),
    });

    // Only when the lead asks for subagent tools; rebuilt per assembly, since `bash` availability can change.
    const task = (assembly: ToolAssemblyContext) => {
      if (!assembly.subagentEnabled || !assembly.scope) return null;
      return createTaskTool({
        runner: assembly.scope.resolve(SUBAGENT_RUNNER),
        admission: assembly.scope.resolve(ADMISSION_RUNTIME),
        types: types.list(),
        receiptsEnabled,
      });
    };
    ctx.tools.add(task, { source: "subagent" });
    ctx.middleware.add(subagentLimitMiddleware({ maxPerResponse: section.max_concurrent, maxPerRun: section.max_total_per_run }));
    ctx.commands.add({
      name: "subagents list",
      summary: "List the subagent types the lead can delegate to, with their model, limits and tools.",
      run(_args: string[], io: CliIO) {
        io.stdout.write(formatTypes(types.list(), { enabled: section.enabled, receiptsEnabled, config }));
        return 0;
      },
    });
  },
});
