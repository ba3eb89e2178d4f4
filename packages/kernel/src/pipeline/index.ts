// `@antler/kernel/pipeline`: the compiler that turns a middleware chain into LangChain middleware, and the thread
// state it compiles against. For runtimes that build agents; it loads LangChain and LangGraph.
export { type RunContextValues, runContextSchema } from "./context.js";
export { callGraphDirectly, stateNeedsInitialization } from "./direct.js";
export { type CompiledPipeline, compilePipeline, composeStateFields, MIDDLEWARE_SPAN_CHANNEL, type MiddlewareSpan } from "./fuse.js";
export {
  mergeArtifacts,
  mergeSandbox,
  mergeTodos,
  mergeViewedImages,
  reducerOf,
  type SandboxRef,
  type Todo,
  threadDataSchema,
  threadStateFields,
  uploadedFileSchema,
  type ViewedImage,
} from "./state.js";
