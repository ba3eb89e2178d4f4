export { AGENT_CONFIG_FILE, AGENT_NAME_PATTERN, AGENT_SOUL_FILE, agentDir, isValidAgentName } from "./agent-files.js";
export {
  ASK_CLARIFICATION_TOOL_NAME,
  type AskClarificationArgs,
  askClarificationSchema,
  CLARIFICATION_LIMITS,
  CLARIFICATION_TYPES,
  type ClarificationNormalization,
  type ClarificationType,
  clarificationMessage,
  createAskClarificationTool,
  type DroppedInput,
  HUMAN_INPUT_FIELD_TYPES,
  type HumanInputField,
  type HumanInputFieldType,
  type HumanInputRequest,
  normalizeClarificationRequest,
  renderClarificationText,
} from "./ask-clarification.js";
export { createPresentFilesTool, PRESENT_FILES_TOOL_NAME, presentFilesSchema } from "./present-files.js";
export { drainKey, SandboxReadDrain } from "./read-drain.js";
export {
  type LiveSandboxLookup,
  loadSyncLedger,
  readThreadFile,
  rereadThreadFile,
  SANDBOX_SYNC_LEDGER_FILE,
  type SyncLedgerEntry,
  type ThreadFileRead,
} from "./sandbox-files.js";
export { createSetupAgentTool, SETUP_AGENT_TOOL_NAME, setupAgentSchema } from "./setup-agent.js";
export type { BuiltinToolOptions } from "./tool-runtime.js";
export { createUpdateAgentTool, UPDATE_AGENT_TOOL_NAME, updateAgentSchema } from "./update-agent.js";
export {
  createViewImageTool,
  DEFAULT_MAX_IMAGE_BYTES,
  type ImageMimeType,
  sniffImageType,
  VIEW_IMAGE_TOOL_NAME,
  type ViewedImageEntry,
  type ViewImageToolOptions,
} from "./view-image.js";
