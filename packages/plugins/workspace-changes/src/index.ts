export { type ChangesOptions, computeChanges, type FileChange, unifiedDiff, type WorkspaceChanges } from "./changes.js";
export {
  default,
  getRunWorkspaceChanges,
  WORKSPACE_CHANGES_EVENT,
  WORKSPACE_CHANGES_NOT_FOUND,
  WORKSPACE_CHANGES_PLUGIN_NAME,
  workspaceChangesConfigSchema,
} from "./plugin.js";
export { type RecorderOptions, WorkspaceRecorder } from "./recorder.js";
export {
  DEFAULT_SCAN_LIMITS,
  type ScanLimits,
  type ScanLogger,
  type ScannedFile,
  type ScanOptions,
  type ScanOutcome,
  WorkspaceScan,
} from "./scan.js";
export { type RunWorkspaceChangesTable, WorkspaceChangesStore, workspaceChangesMigrations } from "./store.js";
