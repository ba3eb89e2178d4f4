export { default as stubRunnerPlugin, stubRunnerPluginConfigSchema } from "./stub-plugin.js";
export { SleepingStubRunner, type SleepingStubRunnerOptions } from "./stub-runner.js";
