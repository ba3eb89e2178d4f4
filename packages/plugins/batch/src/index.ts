export { renderProgress } from "./cli.js";
export { type BatchCallOptions, BatchClient, type BatchClientOptions, type SubmitOptions, type WatchOptions } from "./client.js";
export {
  BATCH_LIMITS,
  type BatchPluginConfig,
  type BatchPluginConfigInput,
  batchPluginConfigSchema,
  batchWorkerConfigSchema,
  PLUGIN_NAME,
  PLUGIN_VERSION,
} from "./config.js";
export { BatchErrorCodes, batchNotFound } from "./errors.js";
export {
  type BatchSubmitBody,
  batchRoutes,
  batchSubmitBodySchema,
  type PublicBatchRecord,
  type PublicBatchStatus,
  publicBatchRecord,
  publicBatchStatus,
} from "./http.js";
export { default } from "./plugin.js";
export { BATCH_ITEM_RUNNER, BATCH_SERVICE, BatchService, type BatchServiceOptions } from "./service.js";
export {
  BATCHES_TABLE,
  type BatchRecord,
  type BatchState,
  type BatchStatus,
  BatchStore,
  type BatchTables,
  batchMigrations,
  type ClaimedItem,
  type ClaimOptions,
  type ExportedItem,
  ITEM_STATES,
  ITEMS_TABLE,
  type ItemCompletion,
  type ItemState,
  type LeaseRef,
  TERMINAL_STATES,
  type VerdictKey,
} from "./store.js";
export {
  BATCH_STATUS_TOOL,
  BATCH_TASK_TOOL,
  batchTaskSchema,
  CANCEL_BATCH_TOOL,
  createBatchTools,
  formatStatusForModel,
} from "./tools.js";
export {
  type BatchItemInput,
  type BatchSubmission,
  type NormalizedItem,
  type NormalizedSubmission,
  validateSubmission,
} from "./validation.js";
export {
  BATCH_PROGRESS_CHANNEL,
  BATCH_QUEUE_CHANNEL,
  type BatchProgressEvent,
  type BatchQueueEvent,
  BatchWorker,
  type BatchWorkerOptions,
} from "./worker.js";
