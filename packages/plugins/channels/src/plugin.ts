import { definePlugin, type Kernel } from "@antler/kernel";
import { provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { channelCommands } from "./cli.js";
import { channelsConfigSchema } from "./config.js";
import { CHANNELS, ChannelsHost } from "./host.js";
import { ChannelStore, channelMigrations } from "./store.js";
import { webhookRoute } from "./webhook.js";

export const CHANNELS_PLUGIN_NAME = "@antler/plugin-channels";
export const CHANNELS_PLUGIN_VERSION = "0.1.0";

/**
 * `@antler/plugin-channels`: the channel contract's runtime. Providers (`@antler/plugin-channel-telegram`, ...)
 * register with `registerChannel`; webhooks mount at `POST /channels/<provider>/webhook` on the gateway.
 */
export default definePlugin({
  name: CHANNELS_PLUGIN_NAME,
  version: CHANNELS_PLUGIN_VERSION,
  kernel: "^0.1.0",
  description:
    "IM channels: chat platforms talk to the agent through one contract (binding, streaming, buttons, no lost or doubled message).",
  configSchema: channelsConfigSchema,
  setup(ctx) {
    const store = new ChannelStore(() => ctx.storage.openDatabase({ migrations: channelMigrations }));
    const host = new ChannelsHost(store, ctx.config, ctx.logger);
    ctx.provide(CHANNELS, { useValue: host });
    ctx.hooks.stop.tap(async () => {
      await host.close();
    });
    const resolve = (kernel: Kernel) => kernel.scope.resolve(CHANNELS);
    for (const command of channelCommands(resolve)) ctx.commands.add(command);
    provideGatewayRoutes(ctx, {
      routes: [webhookRoute(host)],
      onServe: (client) => {
        if (!ctx.config.run_in_gateway) {
          host.runtime(client).startRecovery();
          return;
        }
        return host.startReceiving(client);
      },
    });
  },
});
