export const PLUGIN_NAME = "@antler/plugin-mcp-server";
export const PLUGIN_VERSION = "0.1.0";
