export {
  ADMISSION_REJECTED,
  AdmissionRejectedError,
  type FifoAdmissionOptions,
  FifoAdmissionRuntime,
  isAdmissionRejected,
} from "./admission.js";
export { type BindSubagentsOptions, type BoundSubagents, bindSubagents } from "./bind.js";
export { RESULT_BRIEF_CHARS, resultBrief } from "./brief.js";
export { checkCitations, formatCitations } from "./citations.js";
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
/**
 * `@antler/plugin-subagents`: the `task` tool (when `subagents.enabled`), the SubagentLimit middleware, and the
 * process-wide services other plugins build on: `SUBAGENT_RUNNER` and `ADMISSION_RUNTIME`.
 */
export { default } from "./plugin.js";
export {
  bashExitCode,
  canonicalJson,
  formatReceipt,
  RECEIPTS_MIDDLEWARE_NAME,
  ReceiptRecorder,
  receiptsMiddleware,
  sha256,
} from "./receipts.js";
export {
  EXECUTION_CONTEXT_KEY,
  KernelSubagentRunner,
  type KernelSubagentRunnerOptions,
  MAX_FORWARDED_EVENTS,
  stopReasonOf,
} from "./runner.js";
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
