export { createAnthropicModel, DEFAULT_MAX_TOKENS } from "./model.js";
export { default } from "./plugin.js";
