export { renderRequestLines, unifiedLineDiff } from "./diff.js";
export { CassetteErrorCodes } from "./errors.js";
export {
  appendExchange,
  CASSETTE_FORMAT_VERSION,
  type CassetteExchange,
  type CassetteHeader,
  type LoadedCassette,
  type LoadedExchange,
  loadCassette,
  parseCassette,
  type RecordedResponse,
  serializeResponse,
  writeCassette,
} from "./format.js";
export {
  type CassetteCallOptions,
  CassetteChatModel,
  CassetteRecorder,
  type CassetteRecorderOptions,
  type CassetteReplayOptions,
} from "./model.js";
export {
  createScrubber,
  type NormalizationDirs,
  type NormalizedMessage,
  type NormalizedRequest,
  type NormalizedToolCall,
  normalizeRequest,
  requestHash,
} from "./normalize.js";
export { default } from "./plugin.js";
export { type CassetteOptions, cassetteOptionsSchema, createCassetteModel, parseCassetteOptions } from "./provider.js";
export { type RecordFromScriptOptions, recordCassetteFromScript } from "./record-from-script.js";
