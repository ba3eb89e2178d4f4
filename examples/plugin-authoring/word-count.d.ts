import { type AntlerPlugin } from "@antler/kernel";
import type { PluginAuthoringApi } from "@antler/kernel/authoring";

declare const factory: (api: PluginAuthoringApi) => AntlerPlugin<{ words_per_minute: number; max_chars: number }>;
export default factory;
