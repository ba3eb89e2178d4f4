export { DeferredToolCatalog, type FunctionSchema, globToRegExp, rankWords, type SearchOutcome } from "./catalog.js";
export {
  type ToolSearchSection,
  type ToolSearchSectionInput,
  toolSearchConfigSections,
  toolSearchSection,
  toolSearchSectionSchema,
} from "./config.js";
export { type ToolSearchErrorCode, ToolSearchErrorCodes } from "./errors.js";
export { default, PLUGIN_NAME, PLUGIN_VERSION } from "./plugin.js";
export { mergePromoted, type Promoted } from "./state.js";
export { TOOL_SEARCH } from "./tool.js";
