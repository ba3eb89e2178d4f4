import { createToken, definePlugin, KERNEL, type Kernel } from "@antler/kernel";
import { provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { schedulerCommands } from "./cli.js";
import { schedulerConfigSchema } from "./config.js";
import { schedulerRoutes } from "./http.js";
import { Scheduler } from "./scheduler.js";

export const PLUGIN_NAME = "@antler/plugin-scheduler";
export const PLUGIN_VERSION = "0.1.0";

/** The kernel's scheduler: `kernel.scope.resolve(SCHEDULER)` to add tasks or start the poller in code. */
export const SCHEDULER = createToken<Scheduler>("plugin-scheduler.scheduler");

export default definePlugin({
  name: PLUGIN_NAME,
  version: PLUGIN_VERSION,
  kernel: "^0.1.0",
  description: "Scheduled runs: once and cron tasks, leased across instances, run non-interactively through the normal run path.",
  configSchema: schedulerConfigSchema,
  setup(ctx) {
    let instance: Scheduler | undefined;
    const create = (kernel: Kernel) => {
      instance ??= new Scheduler({ kernel, config: ctx.config, logger: ctx.logger, instanceId: ctx.config.instance_id });
      return instance;
    };
    ctx.provide(SCHEDULER, { useFactory: (scope) => create(scope.resolve(KERNEL)) });
    // Before the kernel disposes its services: running occurrences get their grace period while models,
    // sandboxes and MCP sessions are still up.
    ctx.hooks.stop.tap(async () => {
      await instance?.close();
    });
    const resolve = (kernel: Kernel) => kernel.scope.resolve(SCHEDULER);
    for (const command of schedulerCommands(resolve)) ctx.commands.add(command);
    // Mounted only when the gateway runs (`antler serve`); without it these are never read. While it serves, the
    // gateway also runs this instance's poller (unless `run_in_gateway: false` leaves polling to `antler scheduler run`).
    provideGatewayRoutes(ctx, {
      routes: schedulerRoutes(resolve, ctx.logger),
      onServe: (client) => {
        if (!ctx.config.run_in_gateway) return;
        const scheduler = resolve(client.kernel);
        scheduler.startPoller();
        return () => scheduler.stopPoller();
      },
    });
  },
});
