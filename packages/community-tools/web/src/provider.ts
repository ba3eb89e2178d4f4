// What a web provider plugin (`@antler/tools-<name>`) imports: the provider contract, `defineWebProviderPlugin`,
// the vendor-call helpers and the SSRF guard. Unlike the package's main entry, nothing here loads the web tools
// (LangChain), so a provider's light `./plugin` entry stays light.
export {
  describeProviderFailure,
  ensureOk,
  type ProviderCallOptions,
  type ProviderCallResult,
  parseRetryAfter,
  runProviderCall,
  WebCallTimeoutError,
} from "./call.js";
export { DIRECT_PROVIDER, type RetryConfig, retrySchema } from "./config.js";
export * from "./contract.js";
export {
  createGuardedFetch,
  createVendorFetch,
  type GuardedFetchOptions,
  SsrfBlockedError,
  TooManyRedirectsError,
} from "./guarded-fetch.js";
export {
  createWebProviderRegistry,
  defineWebProviderPlugin,
  registerWebProvider,
  type WebProviderPluginDefinition,
  webProviderRegistry,
} from "./registry.js";
export { containsFrameworkTags, FRAMEWORK_TAG_NAMES, neutralizeFrameworkTags } from "./sanitize.js";
export { classifyAddress, type LookupFunction, validatePublicHttpUrl } from "./ssrf.js";
export { type ApiKeyOptions, capText, endpoint, isHttpUrl, readJson, requireApiKey, trimBaseUrl } from "./vendor.js";
