export {
  describeProviderFailure,
  ensureOk,
  type ProviderCallOptions,
  type ProviderCallResult,
  parseRetryAfter,
  runProviderCall,
  WebCallTimeoutError,
} from "./call.js";
export {
  DIRECT_PROVIDER,
  type RetryConfig,
  retrySchema,
  type WebToolsConfig,
  type WebToolsConfigInput,
  webToolsConfigSchema,
} from "./config.js";
export * from "./contract.js";
export { createDirectProvider, type DirectProviderOptions, readCapped } from "./direct.js";
export { type ExtractedPage, extractReadable, truncateText } from "./extract.js";
export {
  createGuardedFetch,
  createVendorFetch,
  type GuardedFetchOptions,
  SsrfBlockedError,
  TooManyRedirectsError,
} from "./guarded-fetch.js";
export { type DomNode, domToMarkdown, type MarkdownOptions } from "./markdown.js";
export { createPinnedDispatcher } from "./pinned-dispatcher.js";
export { createWebToolsPlugin, default, WEB_TOOLS_PLUGIN_NAME, type WebToolsPluginOptions } from "./plugin.js";
export {
  createWebProviderRegistry,
  defineWebProviderPlugin,
  registerWebProvider,
  type WebProviderPluginDefinition,
  webProviderRegistry,
} from "./registry.js";
export { containsFrameworkTags, FRAMEWORK_TAG_NAMES, neutralizeFrameworkTags } from "./sanitize.js";
export {
  type AddressClass,
  type AddressVerdict,
  classifyAddress,
  formatIPv4,
  type LookupFunction,
  parseIPv4,
  parseIPv6,
  systemLookup,
  validatePublicHttpUrl,
} from "./ssrf.js";
export {
  createWebTools,
  type FormattedImageResult,
  type FormattedSearchResult,
  formatFetchedPage,
  formatImageResults,
  formatSearchResults,
  type WebToolsOptions,
} from "./tools.js";
export {
  type ApiKeyOptions,
  capText,
  endpoint,
  isHttpUrl,
  readJson,
  requireApiKey,
  trimBaseUrl,
} from "./vendor.js";
