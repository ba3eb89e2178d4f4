import type { AntlerPlugin } from "@antler/kernel";
import type { PluginAuthoringApi } from "@antler/kernel/authoring";

declare const factory: (api: PluginAuthoringApi) => AntlerPlugin<{ max_tool_calls: number; max_turns: number; blocked_tools: string[] }>;
export default factory;
