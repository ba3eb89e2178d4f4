export {
  type MessageLogConformanceOptions,
  type MessageLogSubject,
  runMessageLogConformance,
} from "./message-log-conformance.js";
