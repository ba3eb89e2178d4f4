export { type BackendCrashPoint, type CheckpointCrashSuiteOptions, runCheckpointCrashSuite } from "./crash-suite.js";
export {
  type MessageLogConformanceOptions,
  type MessageLogSubject,
  runMessageLogConformance,
} from "./message-log-conformance.js";
