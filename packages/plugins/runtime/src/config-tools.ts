import { AntlerError, type AntlerTool, ErrorCodes, type PluginContext } from "@antler/kernel";
import { importConfiguredModule } from "@antler/kernel/config";
import { isStructuredTool } from "@langchain/core/tools";
import { configToolModule, runtimeConfig } from "./config.js";

/**
 * Loads the tools listed under `tools:` in config.yaml: `use: "<package or ./path>:<export>"` names a LangChain
 * tool, or a factory `(options) => tool` called with the entry's `options`. The entry's `group` feeds
 * `getAvailableTools({ groups })`.
 */
export async function loadConfigTools(ctx: PluginContext): Promise<Array<{ tool: AntlerTool; group: string | undefined }>> {
  const entries = runtimeConfig(ctx.kernelConfig).tools;
  const out: Array<{ tool: AntlerTool; group: string | undefined }> = [];
  for (const [i, entry] of entries.entries()) {
    const where = `tools[${i}].use`;
    const { file, exportName } = configToolModule(entry.use, ctx.paths.configDir, where);
    const mod = await importConfiguredModule(file, ctx.paths.configDir, where);
    const exported = mod[exportName];
    const candidate: unknown = isStructuredTool(exported as never)
      ? exported
      : typeof exported === "function"
        ? await (exported as (o: unknown) => unknown)(entry.options ?? {})
        : undefined;
    if (!isStructuredTool(candidate as never)) {
      throw new AntlerError(ErrorCodes.TOOL_INVALID, `"${entry.use}" is not a tool or a factory that returns one`, {
        where,
        hint: "Export a LangChain tool (tool(...) or defineTool(...)), or a function (options) => tool.",
      });
    }
    const tool = candidate as AntlerTool;
    if (tool.name !== entry.name) {
      ctx.logger.warn(
        { configured: entry.name, actual: tool.name },
        `tools[${i}] is named "${entry.name}" but the tool calls itself "${tool.name}"; using "${tool.name}"`,
      );
    }
    out.push({ tool, group: entry.group });
  }
  return out;
}
