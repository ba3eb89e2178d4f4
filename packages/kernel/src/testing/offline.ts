// `@antler/kernel/testing/offline`: the offline models without the test runner. Everything here works in a plain
// Node process (an app, a demo, a benchmark); `@antler/kernel/testing` re-exports it next to its vitest suites.
export {
  type ChatCompletionRequest,
  chatCompletionRequestSchema,
  type OpenAICompatibleServer,
  type OpenAIServerHandler,
  type OpenAIServerOptions,
  type OpenAIServerReply,
  type RecordedRequest,
  startOpenAICompatibleServer,
} from "./openai-server.js";
export {
  SCRIPT_EXHAUSTED,
  type Script,
  type ScriptedCall,
  type ScriptedCallOptions,
  ScriptedChatModel,
  type ScriptedChatModelOptions,
  type ScriptedStep,
  type ScriptedToolCall,
  type ScriptFunction,
  scriptedModel,
  scriptedToolCallId,
} from "./scripted-model.js";
export { scriptedModelsPlugin } from "./scripted-provider.js";
export { loopbackModelConfig } from "./serve.js";
