export { createGeminiModel } from "./model.js";
export { default } from "./plugin.js";
