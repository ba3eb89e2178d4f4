import { type AntlerTool, definePlugin, KERNEL, KERNEL_VERSION } from "@antler/kernel";
import { provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { memoryCommands } from "./cli.js";
import { type MemoryConfig, memoryConfigSections } from "./config.js";
import { memoryRoutes } from "./http.js";
import { MemoryService } from "./service.js";
import { MEMORY } from "./token.js";

export const PLUGIN_NAME = "@antler/plugin-memory";

/**
 * Long-term memory as a plugin: the `memory:` section, the `MEMORY` service, the Memory middleware (mode
 * `middleware`) or the memory_* tools (mode `tool`), `antler memory
 * ...` and the `/api/memory` routes. The middleware and tools load LangChain only when an agent is built.
 */
export default definePlugin({
  name: PLUGIN_NAME,
  version: "0.1.0",
  kernel: `^${KERNEL_VERSION}`,
  description: "Long-term memory: profile, history and facts with full-text retrieval, debounced extraction or memory tools.",
  dependsOn: ["@antler/plugin-runtime"],
  configSections: memoryConfigSections,
  setup(ctx) {
    const config = ctx.kernelConfig.memory as MemoryConfig;
    let service: MemoryService | undefined;
    ctx.provide(MEMORY, {
      useFactory: () => {
        service ??= new MemoryService({ kernel: ctx.services.resolve(KERNEL), config, logger: ctx.logger });
        return service;
      },
    });
    // Before the kernel disposes its services: queued extractions still reach the model and the database.
    ctx.hooks.stop.tap(async () => {
      await service?.close();
    });

    ctx.middleware.add(
      {
        name: "Memory",
        async create(assembly) {
          if (!config.enabled || config.mode !== "middleware" || assembly.subagent) return null;
          const { memoryMiddleware } = await import("./middleware.js");
          return memoryMiddleware(ctx.services.resolve(MEMORY), ctx.logger);
        },
      },
      // The `normal` stage: after the default chain's Title (DeerFlow's spot), before Clarification. Not anchored
      // to Title itself, which `title.enabled: false` leaves out.
      { stage: "normal" },
    );
    // One set of tools per kernel, built on the first assembly in tool mode.
    let tools: Promise<AntlerTool[]> | undefined;
    for (const name of ["memory_search", "memory_add", "memory_update", "memory_delete"] as const) {
      ctx.tools.add(
        async () => {
          if (!config.enabled || config.mode !== "tool") return null;
          tools ??= import("./tools.js").then((m) => m.memoryTools(ctx.services.resolve(MEMORY)));
          return (await tools).find((t) => t.name === name) ?? null;
        },
        { name },
      );
    }
    for (const command of memoryCommands()) ctx.commands.add(command);
    provideGatewayRoutes(ctx, { routes: memoryRoutes() });
  },
});
