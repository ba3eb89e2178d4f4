export { createOllamaModel } from "./model.js";
export { default } from "./plugin.js";
