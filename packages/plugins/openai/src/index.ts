export { createOpenAIModel } from "./model.js";
export { default } from "./plugin.js";
export { type OpenAICompatiblePreset, PRESETS } from "./presets.js";
