export {
  DUCKDUCKGO_DEFAULT_BASE_URL,
  DUCKDUCKGO_DEFAULT_IMAGES_BASE_URL,
  DUCKDUCKGO_DEFAULT_USER_AGENT,
  type DuckDuckGoConfig,
  type DuckDuckGoConfigInput,
  duckduckgoConfigSchema,
} from "./config.js";
export { type DuckDuckGoImageCaps, extractVqd, isChallengePage, mapDuckDuckGoImages } from "./images.js";
export { type DuckDuckGoPage, type DuckDuckGoParseCaps, parseDuckDuckGoHtml, resolveResultHref } from "./parse.js";
export { DUCKDUCKGO_PLUGIN_NAME, default, duckduckgoToolsPlugin } from "./plugin.js";
export {
  createDuckDuckGoProvider,
  DUCKDUCKGO_PROVIDER_NAME,
  DUCKDUCKGO_REFUSAL_ADVICE,
  DuckDuckGoRefusalError,
} from "./provider.js";
