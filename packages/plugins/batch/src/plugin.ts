import { type AntlerTool, definePlugin } from "@antler/kernel";
import { provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { batchCommands } from "./cli.js";
import { batchPluginConfigSchema, PLUGIN_NAME, PLUGIN_VERSION } from "./config.js";
import { batchRoutes } from "./http.js";
import { BATCH_SERVICE, BatchService } from "./service.js";
import { BATCH_STATUS_TOOL, BATCH_TASK_TOOL, CANCEL_BATCH_TOOL } from "./validation.js";

export default definePlugin({
  name: PLUGIN_NAME,
  version: PLUGIN_VERSION,
  kernel: "^0.1.0",
  description: "Durable batches of subagent items (batch_task, batch_status, cancel_batch) on SQLite or PostgreSQL, run by leased workers.",
  dependsOn: ["@antler/plugin-subagents"],
  configSchema: batchPluginConfigSchema,
  setup(ctx) {
    let service: BatchService | undefined;
    ctx.provide(BATCH_SERVICE, {
      useFactory: (scope) => {
        service = new BatchService({
          config: ctx.config,
          openDatabase: (options) => ctx.storage.openDatabase(options),
          logger: ctx.logger,
          scope,
        });
        return service;
      },
    });
    // The tools exist only while this plugin is installed, and only for agents that may delegate (never for
    // subagents themselves). The embedded worker starts when a batch tool is first used, never at assembly.
    // They (LangChain) load on the first such assembly; `antler plugins list` names them without building them.
    let tools: Promise<readonly AntlerTool[]> | undefined;
    for (const name of [BATCH_TASK_TOOL, BATCH_STATUS_TOOL, CANCEL_BATCH_TOOL]) {
      ctx.tools.add(
        async (context) => {
          if (!context.subagentEnabled || !context.scope) return null;
          const { scope } = context;
          tools ??= import("./tools.js").then((m) => m.createBatchTools(scope.resolve(BATCH_SERVICE)));
          return (await tools).find((t) => t.name === name) ?? null;
        },
        { source: "subagent", name },
      );
    }
    // Under `antler serve`: the `/api/batches` routes, scoped to the authenticated user. A serving process also picks
    // up pending batches right away, including those a previous process left behind, instead of waiting for the
    // next batch tool call.
    provideGatewayRoutes(ctx, {
      routes: batchRoutes((kernel) => kernel.scope.resolve(BATCH_SERVICE)),
      onServe: async (client) => {
        await client.kernel.scope
          .resolve(BATCH_SERVICE)
          .startEmbeddedWorker()
          .catch((error: unknown) =>
            ctx.logger.error({ err: error }, "starting the embedded batch worker failed; batches wait for `antler worker`"),
          );
      },
    });
    // Before the subagents plugin stops its admission runtime (stop hooks run in reverse order).
    ctx.hooks.stop.tap(() => service?.close());
    for (const command of batchCommands()) ctx.commands.add(command);
  },
});
