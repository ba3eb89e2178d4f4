export { createDeepSeekModel } from "./model.js";
export { default } from "./plugin.js";
