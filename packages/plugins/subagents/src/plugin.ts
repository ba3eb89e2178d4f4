import { definePlugin, KERNEL, type ToolAssemblyContext } from "@antler/kernel";
import { FifoAdmissionRuntime } from "./admission.js";
import { type SubagentsSection, subagentsConfigSections, subagentsPluginConfigSchema } from "./config.js";
import {
  ADMISSION_RUNTIME,
  type AdmissionRuntime,
  SUBAGENT_LIMIT_MIDDLEWARE_NAME,
  SUBAGENT_RUNNER,
  type SubagentRunner,
  TASK_TOOL_NAME,
} from "./contract.js";
import { formatTypes, SubagentTypeRegistry } from "./types.js";

export default definePlugin({
  name: "@antler/plugin-subagents",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Subagents: the task tool with receipts and acceptance criteria, the SubagentLimit middleware and the admission runtime.",
  configSchema: subagentsPluginConfigSchema,
  configSections: subagentsConfigSections,
  setup(ctx) {
    const config = ctx.config;
    const section = ctx.kernelConfig.subagents as SubagentsSection;
    const receiptsEnabled = config.verification.receipts_enabled;
    // Whether `bash` may run is the sandbox provider's call (isolation) or the operator's (allow_host_bash).
    const bashAllowed = () => {
      if (ctx.kernelConfig.sandbox.allow_host_bash) return true;
      try {
        return ctx.sandbox.provider().isolated;
      } catch {
        return false;
      }
    };
    const types = new SubagentTypeRegistry({ kernelConfig: ctx.kernelConfig, pluginConfig: config, receiptsEnabled }, bashAllowed);

    // Singletons built on first use and disposed (close) with the kernel.
    ctx.provide(ADMISSION_RUNTIME, {
      useFactory: (): AdmissionRuntime =>
        new FifoAdmissionRuntime({ maxRunning: config.runtime.max_running, maxQueued: config.runtime.max_queued }),
    });
    ctx.provide(SUBAGENT_RUNNER, {
      useFactory: (scope): SubagentRunner => {
        // The runner (LangChain, the runtime) loads with the first subagent run, not with the plugin.
        const kernel = scope.resolve(KERNEL);
        let runner: Promise<SubagentRunner> | undefined;
        const loaded = () =>
          (runner ??= import("./runner.js").then(
            (m) =>
              new m.KernelSubagentRunner({
                kernel,
                types,
                receiptsEnabled,
                cancelGraceMs: Math.round(config.cancel_grace_seconds * 1000),
                logger: ctx.logger,
              }),
          ));
        return { types: () => types.names(), run: async (request) => (await loaded()).run(request) };
      },
    });

    // Only when the lead asks for subagent tools; rebuilt per assembly, since `bash` availability can change.
    const task = async (assembly: ToolAssemblyContext) => {
      if (!assembly.subagentEnabled || !assembly.scope) return null;
      const { createTaskTool } = await import("./task-tool.js");
      return createTaskTool({
        runner: assembly.scope.resolve(SUBAGENT_RUNNER),
        admission: assembly.scope.resolve(ADMISSION_RUNTIME),
        types: types.list(),
        receiptsEnabled,
      });
    };
    ctx.tools.add(task, { source: "subagent", name: TASK_TOOL_NAME });
    const limits = { maxPerResponse: section.max_concurrent, maxPerRun: section.max_total_per_run };
    ctx.middleware.add({
      name: SUBAGENT_LIMIT_MIDDLEWARE_NAME,
      create: async (build) => (build.subagent ? null : (await import("./limit.js")).subagentLimitSpec(limits)),
    });
    ctx.commands.add({
      name: "subagents list",
      summary: "List the subagent types the lead can delegate to, with their model, limits and tools.",
      options: {},
      run(_args, io) {
        io.stdout.write(formatTypes(types.list(), { enabled: section.enabled, receiptsEnabled, config }));
        return 0;
      },
    });
  },
});
