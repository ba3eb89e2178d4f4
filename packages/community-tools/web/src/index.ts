// The package's main entry: everything a web provider plugin uses (./provider), plus the web tools themselves.

export { type WebToolsConfig, type WebToolsConfigInput, webToolsConfigSchema } from "./config.js";
export { createDirectProvider, type DirectProviderOptions, readCapped } from "./direct.js";
export { type ExtractedPage, extractReadable, truncateText } from "./extract.js";
export { type DomNode, domToMarkdown, type MarkdownOptions } from "./markdown.js";
export { createPinnedDispatcher } from "./pinned-dispatcher.js";
export { createWebToolsPlugin, default, WEB_TOOLS_PLUGIN_NAME, type WebToolsPluginOptions } from "./plugin.js";
export * from "./provider.js";
export {
  type AddressClass,
  type AddressVerdict,
  formatIPv4,
  parseIPv4,
  parseIPv6,
  systemLookup,
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
