export { type SearxngConfig, type SearxngConfigInput, searxngConfigSchema } from "./config.js";
export { default } from "./plugin.js";
export { createSearxngProvider, SEARXNG_PROVIDER, type SearxngAnswer } from "./provider.js";
