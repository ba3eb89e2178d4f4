import type { AntlerPlugin, PluginAuthoringApi } from "@antler/kernel";

declare const factory: (api: PluginAuthoringApi) => AntlerPlugin<{ max_tool_calls: number; max_turns: number; blocked_tools: string[] }>;
export default factory;
