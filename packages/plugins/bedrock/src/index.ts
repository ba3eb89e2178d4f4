export { createBedrockModel } from "./model.js";
export { default } from "./plugin.js";
export { reasoningFields } from "./settings.js";
