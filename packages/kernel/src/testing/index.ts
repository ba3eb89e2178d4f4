export { runCli, runKernelCommand } from "./cli.js";
export { type CapturedLogs, captureLogs, createTestKernel, type TestKernelOptions } from "./kernel.js";
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
export { type PluginConformanceOptions, runPluginConformance } from "./plugin-conformance.js";
export { runSandboxConformance, type SandboxConformanceOptions, type SandboxConformanceSubject } from "./sandbox-conformance.js";
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
export {
  type AntlerServe,
  type AntlerServeOptions,
  antlerBinPath,
  antlerCliBuilt,
  loopbackModelConfig,
  startAntlerServe,
} from "./serve.js";
export {
  CHROMIUM_PATH,
  chromiumPath,
  createPostgresTestSchema,
  describeUnless,
  describeWithChromium,
  describeWithPostgres,
  describeWithRedis,
  POSTGRES_TEST_URL_ENV,
  type PostgresTestSchema,
  postgresTestUrl,
  usePostgresSchema,
} from "./services.js";
export { type TempDirs, useTempDirs } from "./temp-dirs.js";
