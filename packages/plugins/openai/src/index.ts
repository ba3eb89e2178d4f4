export { createOpenAIModel } from "./model.js";
export { default } from "./plugin.js";
