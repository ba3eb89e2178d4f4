export {
  CRAWL4AI_API_TOKEN_ENV,
  CRAWL4AI_DEFAULT_BASE_URL,
  type Crawl4aiConfig,
  type Crawl4aiConfigInput,
  crawl4aiConfigSchema,
} from "./config.js";
export { CRAWL4AI_PLUGIN_NAME, crawl4aiToolsPlugin, default } from "./plugin.js";
export { CRAWL4AI_PROVIDER_NAME, type Crawl4aiProviderOptions, crawl4aiMdBody, createCrawl4aiProvider } from "./provider.js";
