export { type ChannelsConfig, type ChannelsConfigInput, channelsConfigSchema } from "./config.js";
export {
  type ButtonPress,
  type ChannelCapabilities,
  type ChannelProvider,
  ChannelRateLimitError,
  type ChannelSink,
  type ChatAddress,
  type InboundFile,
  type InboundMessage,
  type OutboundButton,
  type OutboundFile,
  type OutboundMessage,
  type SentMessage,
} from "./contract.js";
export { CHANNELS, type ChannelProviderSource, type ChannelPushTarget, ChannelsHost, registerChannel } from "./host.js";
export { CHANNELS_PLUGIN_NAME, CHANNELS_PLUGIN_VERSION, default } from "./plugin.js";
export { ChannelRuntime, type ChannelRuntimeOptions } from "./runtime.js";
export { type ChannelEventRow, type ChannelEventStatus, ChannelStore, channelMigrations, normalizeConnectCode } from "./store.js";
