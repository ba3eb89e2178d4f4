export { runCli, runKernelCommand } from "./cli.js";
export { type CapturedLogs, captureLogs, createTestKernel, type TestKernelOptions } from "./kernel.js";
export * from "./offline.js";
export { type PluginConformanceOptions, runPluginConformance } from "./plugin-conformance.js";
export { runSandboxConformance, type SandboxConformanceOptions, type SandboxConformanceSubject } from "./sandbox-conformance.js";
export {
  type AntlerServe,
  type AntlerServeOptions,
  antlerBinPath,
  antlerCliBuilt,
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
