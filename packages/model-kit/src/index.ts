// `@antler/model-kit`: what a model-provider plugin that wraps a vendor SDK (OpenAI, Anthropic) needs besides the
// kernel's contract. A library of its own, not part of the kernel: it loads LangChain's chat-model classes, and only
// such providers need it (a cassette or a scripted model does not).
export { fetchWithTraceId } from "@antler/kernel";
export {
  type AttemptReason,
  type CallTarget,
  classifyFailure,
  createModelCallPlanner,
  isRefusal,
  type ModelAttempt,
  parseRetryAfter,
  ResilientChatModel,
  withCallPlan,
} from "./call-plan.js";
export { inProcessRateStore, ModelLimiter, type ModelLimits, type ModelRateStore, type ModelSlot } from "./limits.js";
export { type ModelErrorContextOptions, providerErrorStatus, toModelCallError, withModelErrorContext } from "./model-call.js";
export { modelCallCostUsd, type PricedUsage } from "./pricing.js";
export { type ReasoningPassback, reasoningText, reasoningToSendBack, withReasoningSentBack } from "./reasoning.js";
export { traceIdHeaders } from "./trace-headers.js";
