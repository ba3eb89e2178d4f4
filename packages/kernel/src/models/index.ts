// `@antler/kernel/models`: helpers for model-provider plugins. A subpath of its own because it loads LangChain's
// chat-model classes, which importing the kernel itself must not.
export {
  boundToolName,
  boundToolNames,
  type CompleteAssistantMessage,
  splitTextDeltas,
  streamAssistantMessage,
  toAIMessage,
  toMessageChunks,
  usageFrom,
} from "./chunks.js";
export {
  fetchWithTraceId,
  type ModelErrorContextOptions,
  providerErrorStatus,
  toModelCallError,
  withModelErrorContext,
} from "./model-call.js";
