export { FIRECRAWL_API_KEY_ENV, type FirecrawlConfig, type FirecrawlConfigInput, firecrawlConfigSchema } from "./config.js";
export { default } from "./plugin.js";
export { createFirecrawlProvider, FIRECRAWL_PROVIDER, type FirecrawlProviderOptions } from "./provider.js";
