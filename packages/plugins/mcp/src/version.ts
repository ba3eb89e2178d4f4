export const PLUGIN_NAME = "@antler/plugin-mcp";
export const PLUGIN_VERSION = "0.1.0";
