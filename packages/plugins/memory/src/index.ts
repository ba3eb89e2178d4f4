export { memoryCommands } from "./cli.js";
export { type MemoryCallOptions, MemoryClient, type MemoryClientTarget } from "./client.js";
export {
  FACT_CATEGORIES,
  type FactCategory,
  MEMORY_MODES,
  type MemoryConfig,
  type MemoryConfigInput,
  type MemoryMode,
  memoryConfigSections,
  memorySectionSchema,
} from "./config.js";
export { isMemoryError, type MemoryErrorCode, MemoryErrorCodes, memoryError } from "./errors.js";
export {
  EXTRACTION_INSTRUCTIONS,
  type ExtractionReply,
  extractionPrompt,
  extractionReplySchema,
  MalformedExtractionReply,
  parseExtractionReply,
  type TranscriptMessage,
} from "./extraction.js";
export { FactIndex, INDEX_MAX_FACTS, indexTerms, type ScopeSnapshot, ScopeSnapshotCache } from "./fact-index.js";
export { memoryRoutes } from "./http.js";
export { MEMORY_MIDDLEWARE_NAME, memoryMiddleware, transcriptOf } from "./middleware.js";
export { default, PLUGIN_NAME } from "./plugin.js";
export { REDACTED, redactMemoryText } from "./redact.js";
export * from "./schemas.js";
export { MAX_QUERY_TERMS, MAX_TERM_DOCS, queryTerms } from "./search-terms.js";
export { type ExtractionOutcome, formatContext, MemoryService, type MemoryServiceOptions, memoryScope } from "./service.js";
export {
  FACTS_TABLE,
  type MemoryFact,
  type MemoryHistory,
  type MemoryProfile,
  type MemoryScope,
  MemoryStore,
  type MemoryTables,
  memoryMigrations,
  PROFILES_TABLE,
  type SearchHit,
  scopeToken,
} from "./store.js";
export { MEMORY } from "./token.js";
export { MEMORY_TOOL_NAMES, memoryTools } from "./tools.js";
