// `@antler/kernel/models`: helpers for model-provider plugins. A subpath of its own because it loads LangChain's
// chat-model classes, which importing the kernel itself must not.
export { fetchWithTraceId } from "../trace.js";
export { type ModelErrorContextOptions, providerErrorStatus, toModelCallError, withModelErrorContext } from "./model-call.js";
