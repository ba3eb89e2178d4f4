export { type CapturedLogs, captureLogs, createTestKernel, type TestKernelOptions } from "./kernel.js";
export { type PluginConformanceOptions, runPluginConformance } from "./plugin-conformance.js";
