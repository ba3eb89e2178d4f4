import { AntlerError, createToken, type Logger, type PluginContext } from "@antler/kernel";
import type { AntlerClient } from "@antler/plugin-runtime";
import type { ChannelsConfig } from "./config.js";
import type { ChannelProvider, ChatAddress } from "./contract.js";
import { Outbound } from "./outbound.js";
import { ChannelRuntime } from "./runtime.js";
import type { ChannelStore } from "./store.js";

const PROVIDER_ID = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** Where a push goes: a provider and a chat (and thread) in it. */
export interface ChannelPushTarget {
  channel: string;
  chat: string;
  /** The chat's workspace (a Slack team id) where the platform has them; needed only when the chat id is in several. */
  workspace?: string | undefined;
  thread?: string | undefined;
}

/** A provider, or a function that makes it on first use (so `setup` does no I/O). */
export type ChannelProviderSource = ChannelProvider | (() => ChannelProvider);

/**
 * The channels of one kernel: the registered providers, the store and the one runtime. `CHANNELS` resolves it;
 * providers register through `registerChannel`.
 */
export class ChannelsHost {
  private readonly sources = new Map<string, ChannelProviderSource>();
  private readonly made = new Map<string, ChannelProvider>();
  private current: ChannelRuntime | undefined;

  constructor(
    readonly store: ChannelStore,
    readonly config: ChannelsConfig,
    private readonly logger: Logger,
  ) {}

  register(id: string, source: ChannelProviderSource): void {
    if (!PROVIDER_ID.test(id)) {
      throw new Error(`channel provider id "${id}" must be lower-case letters, digits and "-" (at most 32)`);
    }
    if (this.sources.has(id)) throw new Error(`a channel provider "${id}" is registered twice`);
    this.sources.set(id, source);
  }

  /** Every registered provider, made on first call. */
  providers(): ReadonlyMap<string, ChannelProvider> {
    for (const [id, source] of this.sources) {
      if (this.made.has(id)) continue;
      const provider = typeof source === "function" ? source() : source;
      if (provider.id !== id) throw new Error(`channel provider registered as "${id}" says its id is "${provider.id}"`);
      this.made.set(id, provider);
    }
    return this.made;
  }

  ids(): string[] {
    return [...this.sources.keys()];
  }

  /** The runtime, created with the first client that asks (the gateway's, or `antler channels run`'s). */
  runtime(client: AntlerClient): ChannelRuntime {
    this.current ??= new ChannelRuntime({
      client,
      store: this.store,
      config: this.config,
      logger: this.logger,
      providers: () => this.providers(),
    });
    return this.current;
  }

  /** Starts every provider's long-connection mode (`receive`), and the recovery of open events. */
  startReceiving(client: AntlerClient): () => Promise<void> {
    const runtime = this.runtime(client);
    const controller = new AbortController();
    const loops: Promise<void>[] = [];
    for (const provider of this.providers().values()) {
      if (!provider.receive) continue;
      this.logger.info({ provider: provider.id }, "channel receiving");
      loops.push(
        provider.receive(runtime.sink(provider.id), controller.signal).catch((err) => {
          if (!controller.signal.aborted) this.logger.error({ err, provider: provider.id }, "channel receiver stopped");
        }),
      );
    }
    runtime.startRecovery();
    return async () => {
      controller.abort();
      await Promise.allSettled(loops);
    };
  }

  /**
   * Checks that `userId` may receive pushes in `target`: the provider is configured and the user has a conversation
   * in that chat (they connected and wrote to the bot there), so nobody can make the bot post into someone else's chat.
   */
  async checkPushTarget(userId: string, target: ChannelPushTarget): Promise<{ provider: ChannelProvider; chat: ChatAddress }> {
    const provider = this.providers().get(target.channel);
    if (!provider) {
      throw new AntlerError("ANTLER_ERR_CHANNEL_UNKNOWN", `no channel provider "${target.channel}" is configured`, {
        where: "deliver_to.channel",
        hint:
          this.ids().length > 0
            ? `Configured: ${this.ids().join(", ")}.`
            : "Add a provider plugin such as @antler/plugin-channel-telegram or @antler/plugin-channel-slack.",
      });
    }
    const workspace = target.workspace ?? (await this.pushWorkspace(provider.id, userId, target));
    const chat: ChatAddress = {
      id: target.chat,
      kind: "direct",
      ...(workspace ? { workspace } : {}),
      ...(target.thread ? { thread: target.thread } : {}),
    };
    if (!(await this.store.conversation(provider.id, chat, userId))) {
      throw new AntlerError("ANTLER_ERR_CHANNEL_NOT_BOUND", `user ${userId} has no conversation in ${target.channel} chat ${target.chat}`, {
        where: "deliver_to.chat",
        hint: "Connect in that chat first (`antler channels connect` and /connect <code>), then send the bot a message there.",
      });
    }
    return { provider, chat };
  }

  /**
   * The workspace of a push target that names none: the one workspace where the user talks to the bot in that chat
   * (and thread). Several are ambiguous, a coded error that lists them; none leaves the lookup to say "not bound".
   */
  private async pushWorkspace(providerId: string, userId: string, target: ChannelPushTarget): Promise<string | undefined> {
    const chats = (await this.store.conversationChats(providerId, target.chat, userId)).filter(
      (c) => (c.thread ?? "") === (target.thread ?? ""),
    );
    const workspaces = [...new Set(chats.map((c) => c.workspace ?? ""))];
    if (workspaces.length > 1) {
      throw new AntlerError(
        "ANTLER_ERR_CHANNEL_AMBIGUOUS",
        `user ${userId} talks to the bot in ${target.channel} chat ${target.chat} in ${workspaces.length} workspaces`,
        { where: "deliver_to.workspace", hint: `Name one in deliver_to.workspace: ${workspaces.filter(Boolean).join(", ")}.` },
      );
    }
    return workspaces[0] || undefined;
  }

  /**
   * Posts `text` to a chat where `userId` talks to the bot (a scheduled task's `deliver_to`), once per `slot`: a
   * retried delivery with the same slot does not post again. Throws the coded errors of `checkPushTarget`.
   */
  async push(userId: string, target: ChannelPushTarget, text: string, slot: string): Promise<string> {
    const { provider, chat } = await this.checkPushTarget(userId, target);
    const out = new Outbound(provider, this.store, this.config.send_attempts, (info) =>
      this.logger.warn(
        { provider: provider.id, ...info },
        info.rateLimited ? "channel rate-limited; waiting" : "channel send failed; retrying",
      ),
    );
    const sent = await out.send(`push:${slot}`, chat, { text: text.trim() === "" ? "(no answer)" : text });
    this.logger.info({ provider: provider.id, chat: target.chat, user: userId, slot }, "channel push delivered");
    return sent.messageId;
  }

  async close(): Promise<void> {
    await this.current?.close();
    for (const provider of this.made.values()) await provider.close?.().catch(() => {});
    await this.store.close();
  }
}

/** The kernel's channels: `kernel.scope.resolve(CHANNELS)`. */
export const CHANNELS = createToken<ChannelsHost>("plugin-channels.host");

/**
 * Registers a channel provider from a plugin's `setup` (list `@antler/plugin-channels` in `dependsOn`):
 * `registerChannel(ctx, () => myProvider(ctx.config))`. The provider is made on first use.
 */
export function registerChannel(ctx: PluginContext<unknown>, source: ChannelProviderSource, id?: string): void {
  const host = ctx.services.resolve(CHANNELS);
  const resolvedId = id ?? (typeof source === "function" ? undefined : source.id);
  if (resolvedId !== undefined) {
    host.register(resolvedId, source);
    return;
  }
  // A factory without an id: make it now to learn the id (cheap by contract: no I/O before first use).
  const provider = (source as () => ChannelProvider)();
  host.register(provider.id, provider);
}
