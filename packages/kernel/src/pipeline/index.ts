// `@antler/kernel/pipeline`: the compiler that turns a middleware chain into LangChain middleware, for runtimes
// that build agents. It loads LangChain and LangGraph.
export {
  type CompiledPipeline,
  compilePipeline,
  composeStateFields,
  MIDDLEWARE_SPAN_CHANNEL,
  type MiddlewareSpan,
  type PipelineBase,
} from "./fuse.js";
