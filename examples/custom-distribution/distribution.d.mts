import type { AntlerPlugin, CodePlugin, KernelConfigInput } from "@antler/kernel";
import type { AntlerClient } from "@antler/plugin-runtime";
export declare const supportTools: AntlerPlugin<{ sla_hours: number }>;
export declare const houseStyle: AntlerPlugin;
export declare const catalogue: Readonly<Record<string, AntlerPlugin>>;
export declare function createSupportClient(options?: {
  models?: KernelConfigInput["models"];
  storage?: KernelConfigInput["storage"];
  baseDir?: string;
  plugins?: string[];
  pluginConfig?: Record<string, unknown>;
  extraPlugins?: CodePlugin[];
  userId?: string;
}): Promise<AntlerClient>;
