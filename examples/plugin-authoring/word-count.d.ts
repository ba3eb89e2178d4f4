import type { AntlerPlugin, PluginAuthoringApi } from "@antler/kernel";

declare const factory: (api: PluginAuthoringApi) => AntlerPlugin<{ words_per_minute: number; max_chars: number }>;
export default factory;
