import type { Logger } from "@antler/kernel";
import type { AntlerClient } from "@antler/plugin-runtime";
import type { ChannelsConfig } from "./config.js";
import type { ChannelProvider, InboundMessage, OutboundMessage } from "./contract.js";
import type { Outbound } from "./outbound.js";
import type { ChannelEventRow, ChannelStore } from "./store.js";

/** What the handlers of one event (commands, the answer) use of the runtime. */
export interface RuntimeServices {
  readonly client: AntlerClient;
  readonly store: ChannelStore;
  readonly config: ChannelsConfig;
  readonly logger: Logger;
}

/** One claimed event being handled: everything its handlers need, so they stay free functions. */
export interface EventContext {
  readonly runtime: RuntimeServices;
  readonly provider: ChannelProvider;
  readonly row: ChannelEventRow;
  readonly message: InboundMessage;
  readonly out: Outbound;
  /** Replies once per `slot` of this event (idempotent across restarts); resolves to the message id. */
  reply(text: string, slot?: string, extra?: Omit<OutboundMessage, "text">): Promise<string>;
}
