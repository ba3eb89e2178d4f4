export {
  AG_UI_PROTOCOL_VERSION,
  AgUiEncoder,
  type AgUiEvent,
  type AgUiRunIds,
  type AgUiRunResult,
  type AgUiState,
  agUiState,
} from "./ag-ui/encoder.js";
export { diffJsonPatch, type JsonPatchOperation } from "./ag-ui/json-patch.js";
export { type AgUiRunInput, type AgUiTurn, agUiForwardedPropsSchema, agUiRunInputSchema, agUiTurn } from "./ag-ui/request.js";
export { AG_UI_INVALID_INPUT, type AgUiRouteOptions, agUiRoutes } from "./ag-ui/route.js";
export { type AiSdkMessageMetadata, encodeUiMessageChunks, type UiMessageChunk } from "./ai-sdk/encoder.js";
export { type AiSdkChatRequest, aiSdkChatRequestSchema, type ChatInput, chatInput } from "./ai-sdk/request.js";
export { AI_SDK_INVALID_CHAT, type AiSdkRouteOptions, aiSdkRoutes, UI_MESSAGE_STREAM_HEADER } from "./ai-sdk/route.js";
export { type LangGraphAssistant, LEAD_ASSISTANT_ID, type ResolvedAssistant, resolveAssistant } from "./langgraph/assistants.js";
export { type LangGraphMessage, type LangGraphValues, toLangGraphMessage, toLangGraphValues } from "./langgraph/messages.js";
export { type LangGraphRouteOptions, langGraphRoutes } from "./langgraph/routes.js";
export {
  ASSISTANT_NOT_FOUND,
  interruptOf,
  LANGGRAPH_INVALID_REQUEST,
  LANGGRAPH_UNSUPPORTED,
  type LangGraphErrorBody,
  type LangGraphInterrupt,
  type LangGraphThread,
  type LangGraphThreadStatus,
  langGraphError,
  loadLangGraphThread,
  pendingInterrupt,
  threadStatus,
  toLangGraphThread,
} from "./langgraph/wire.js";
export { default, PROTOCOLS_PLUGIN_NAME, type ProtocolsConfig, protocolsConfigSchema } from "./plugin.js";
export { type ProtocolEvent, type ProtocolUsage, RunEventMapper } from "./run-events.js";
