import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { ensureTraceContext, ensureTraceId, type Logger } from "@antler/kernel";
import type { AntlerClient } from "@antler/plugin-runtime";
import { APPROVE_VALUE, answerWithResume, answerWithRun, type PendingQuestion, REJECT_VALUE } from "./answer.js";
import { handleCommand, parseCommand } from "./commands.js";
import type { ChannelsConfig } from "./config.js";
import type { ChannelProvider, ChannelSink, InboundMessage } from "./contract.js";
import type { EventContext } from "./event-context.js";
import { Outbound } from "./outbound.js";
import type { ChannelStore } from "./store.js";

export interface ChannelRuntimeOptions {
  /** The client runs go through: the gateway's under `antler serve`, one of its own in `antler channels run`. */
  client: AntlerClient;
  store: ChannelStore;
  config: ChannelsConfig;
  logger: Logger;
  /** The registered providers, read when an event is handled (providers may register after the runtime exists). */
  providers: () => ReadonlyMap<string, ChannelProvider>;
  /** Names this instance in event leases. Default `<hostname>:<pid>:<random>`. */
  instanceId?: string;
}

/** What handling an event came to (also its journal status). */
export type EventOutcome = "answered" | "ignored";

/** Commands handled at once, not behind the chat's queue: they are about the run that may be in it. */
const IMMEDIATE_COMMANDS = new Set(["cancel", "status", "help"]);

const HOW_TO_CONNECT = (provider: string) =>
  [
    "Hi! This bot answers people whose account is connected to Antler.",
    `To connect, ask your Antler operator to run \`antler channels connect ${provider} --user <your user>\`, then send me \`/connect <code>\` with the code it prints.`,
  ].join("\n");

/**
 * The channel runtime: journals inbound events before they are acknowledged, claims each once (leased, so a dead
 * instance's events are taken over), maps the sender to an Antler user and the conversation to a thread, and runs
 * the agent through the same `AntlerClient` path as the gateway, answering through the provider.
 */
export class ChannelRuntime {
  readonly instanceId: string;
  readonly client: AntlerClient;
  readonly store: ChannelStore;
  readonly config: ChannelsConfig;
  readonly logger: Logger;
  private readonly providers: () => ReadonlyMap<string, ChannelProvider>;
  /** Per chat: the tail of its handling chain, so one chat's events are handled in order. */
  private readonly chains = new Map<string, Promise<void>>();
  private readonly inFlight = new Set<Promise<void>>();
  private recovery: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: ChannelRuntimeOptions) {
    this.client = options.client;
    this.store = options.store;
    this.config = options.config;
    this.logger = options.logger;
    this.providers = options.providers;
    this.instanceId = options.instanceId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  }

  /** The sink a provider hands its events to. */
  sink(providerId: string): ChannelSink {
    return { accept: (message) => this.accept(providerId, message) };
  }

  /**
   * Journals the event under the current trace id (the webhook request's) or a new one, then handles it in the
   * background. A repeat of a journaled event id does nothing: a platform's retry never starts a second run.
   */
  async accept(providerId: string, message: InboundMessage): Promise<void> {
    const traceId = ensureTraceId();
    const fresh = await this.store.record(providerId, message, traceId);
    const log = { provider: providerId, event_id: message.eventId, chat: message.chat.id, trace_id: traceId };
    if (!fresh) {
      this.logger.info(log, "channel event already journaled; ignoring the repeat");
      return;
    }
    this.logger.info(log, "channel event journaled");
    if (!this.closed) this.schedule(`${providerId}:${message.eventId}`, `${providerId}:${message.chat.id}`, message);
  }

  /**
   * One chat's events are handled in order (a `/new` before a question applies to it), except the commands about
   * what is running, which must not wait behind the run they are about.
   */
  private schedule(rowId: string, chatKey: string, message: InboundMessage): void {
    const command = message.button ? undefined : parseCommand(message.text)?.name;
    if (command !== undefined && IMMEDIATE_COMMANDS.has(command)) {
      const now = this.handle(rowId).catch(() => {});
      this.inFlight.add(now);
      void now.finally(() => this.inFlight.delete(now));
      return;
    }
    const previous = this.chains.get(chatKey) ?? Promise.resolve();
    const next = previous.then(() => this.handle(rowId)).catch(() => {});
    this.chains.set(chatKey, next);
    this.inFlight.add(next);
    void next.finally(() => {
      this.inFlight.delete(next);
      if (this.chains.get(chatKey) === next) this.chains.delete(chatKey);
    });
  }

  /** Handles the journaled events nobody answered (this or a dead instance's), oldest first. */
  async recoverOpenEvents(): Promise<number> {
    const open = await this.store.openEvents(100);
    for (const row of open) {
      const message = JSON.parse(row.payload) as InboundMessage;
      this.schedule(row.id, `${row.provider}:${message.chat.id}`, message);
    }
    if (open.length > 0) this.logger.info({ events: open.length }, "channel events to recover");
    return open.length;
  }

  /** Looks for open events (and prunes old handled ones) now and then every `recovery_interval_seconds`. */
  startRecovery(): void {
    if (this.recovery || this.closed) return;
    const tick = () => {
      void this.recoverOpenEvents().catch((err) => this.logger.warn({ err }, "channel recovery failed"));
      void this.store
        .prune(new Date(Date.now() - this.config.retention_days * 86_400_000))
        .catch((err) => this.logger.warn({ err }, "channel journal pruning failed"));
    };
    tick();
    this.recovery = setInterval(tick, this.config.recovery_interval_seconds * 1000);
    this.recovery.unref();
  }

  /** Resolves once every event handed over so far is handled. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Issues a one-time code that binds whoever sends `/connect <code>` on `provider` to `userId`. */
  issueConnectCode(provider: string, userId: string): Promise<{ code: string; expiresAt: string }> {
    return this.store.issueConnectCode(provider, userId, this.config.connect_code_ttl_seconds * 1000);
  }

  outbound(provider: ChannelProvider): Outbound {
    return new Outbound(provider, this.store, this.config.send_attempts, (info) =>
      this.logger.warn(
        { provider: provider.id, ...info },
        info.rateLimited ? "channel rate-limited; waiting" : "channel send failed; retrying",
      ),
    );
  }

  private async handle(rowId: string): Promise<void> {
    if (this.closed) return;
    const leaseMs = this.config.lease_seconds * 1000;
    const row = await this.store.claim(rowId, this.instanceId, leaseMs);
    if (!row) return;
    const provider = this.providers().get(row.provider);
    if (!provider) {
      await this.store.finish(row.id, "failed", `no channel provider "${row.provider}" is registered`);
      return;
    }
    const heartbeat = setInterval(
      () => void this.store.renew(row.id, this.instanceId, leaseMs).catch(() => {}),
      Math.max(200, leaseMs / 3),
    );
    heartbeat.unref();
    await ensureTraceContext(row.trace_id, async () => {
      const message = JSON.parse(row.payload) as InboundMessage;
      const log = { provider: row.provider, event_id: row.event_id, chat: message.chat.id, attempt: row.attempts };
      const out = this.outbound(provider);
      const context: EventContext = {
        runtime: this,
        provider,
        row,
        message,
        out,
        reply: async (text, slot = "reply", extra = {}) =>
          (await out.send(`${row.id}#${slot}`, message.chat, { text, ...extra })).messageId,
      };
      try {
        const outcome = await this.process(context);
        await this.store.finish(row.id, outcome);
        this.logger.info({ ...log, outcome }, "channel event handled");
      } catch (err) {
        this.logger.warn({ ...log, err }, "channel event failed");
        await this.store.finish(row.id, "failed", (err as Error)?.message ?? String(err)).catch(() => {});
        await context.reply(`Sorry, that failed (trace ${row.trace_id}).`, "failure").catch(() => {});
      } finally {
        clearInterval(heartbeat);
      }
    });
  }

  private allowed(provider: string, message: InboundMessage): boolean {
    const { users, chats, workspaces } = this.config.allow;
    if (users.length > 0 && !users.includes(`${provider}:${message.sender.id}`)) return false;
    if (chats.length > 0 && !chats.includes(`${provider}:${message.chat.id}`)) return false;
    if (workspaces.length > 0 && !workspaces.includes(`${provider}:${message.chat.workspace ?? ""}`)) return false;
    return true;
  }

  private async process(ctx: EventContext): Promise<EventOutcome> {
    const { provider, message, row } = ctx;
    if (!this.allowed(provider.id, message)) return "ignored";
    if (message.button) await provider.acknowledgeButton?.(message.button).catch(() => {});
    const command = message.button ? undefined : parseCommand(message.text);
    const addressed =
      message.chat.kind === "direct" || this.config.groups.reply === "all" || message.mentioned === true || !!message.button;
    if (!addressed) return "ignored";
    if (command?.name === "connect" || (command?.name === "start" && command.args.length > 0)) {
      const userId = await this.store.redeemConnectCode(provider.id, command.args, message.sender.id);
      if (!userId) {
        await ctx.reply(
          "That code is unknown, used or expired. Ask for a new one (`antler channels connect`) and send `/connect <code>` within its time.",
        );
      } else {
        this.logger.info({ provider: provider.id, platform_user: message.sender.id, user: userId }, "channel user connected");
        await ctx.reply(`Connected. You talk to Antler as ${userId}; send /help to see what I understand.`);
      }
      return "answered";
    }
    const binding = await this.store.binding(provider.id, message.sender.id);
    const userId = binding?.user_id ?? this.config.default_user;
    if (!userId) {
      await ctx.reply(HOW_TO_CONNECT(provider.id));
      return "answered";
    }
    await this.store.update(row.id, { user_id: userId });
    const conversation = await this.store.conversation(provider.id, message.chat, userId);
    const threadId = conversation?.thread_id ?? randomUUID();
    if (!conversation) await this.store.saveConversation(provider.id, message.chat, userId, { thread_id: threadId });
    const current = { threadId, agent: conversation?.agent ?? null, model: conversation?.model ?? null, userId };
    if (command && (await handleCommand(ctx, command, current))) return "answered";
    const pending = conversation?.pending_question ? (JSON.parse(conversation.pending_question) as PendingQuestion) : null;
    let text = message.text;
    const pressed = message.button ? buttonDecision(message.button.value) : undefined;
    if (pressed && !pending?.approval && row.run_id) {
      // A press this event already took before a crash (the question is cleared): resume, or answer from, that run.
      await answerWithResume(ctx, current, row.run_id, pressed);
      return "answered";
    }
    if (pending?.approval && !command && (message.button ? message.button.messageId === pending.message_id : true)) {
      const decision = message.button ? buttonDecision(message.button.value) : typedDecision(stripLeadingMention(text));
      if (!decision) {
        if (message.button) return "ignored";
        await ctx.reply(
          "This conversation waits for your approval first: press Approve or Reject, or reply `approve` or `reject: <reason>`.",
        );
        return "answered";
      }
      // The run is journaled on the event before the question is cleared, so a crash in between resumes it.
      await this.store.update(row.id, { run_id: pending.approval.run_id, thread_id: threadId });
      await this.store.saveConversation(provider.id, message.chat, userId, { thread_id: threadId, pending_question: null });
      // The question keeps its text and shows the decision; its buttons go, so it cannot be answered twice.
      const shown = decision.decision === "approve" ? "✔ Approved" : `✖ Rejected${decision.reason ? `: ${decision.reason}` : ""}`;
      await ctx.out.edit(message.chat, pending.message_id, { text: `${pending.question}\n\n${shown}` }).catch(() => {});
      await answerWithResume(ctx, current, pending.approval.run_id, decision);
      return "answered";
    }
    if (message.button) {
      const index = Number(message.button.value.replace(/^c:/, ""));
      const option = pending && !pending.approval && pending.message_id === message.button.messageId ? pending.options[index] : undefined;
      if (option === undefined) {
        await provider.acknowledgeButton?.(message.button, "That question was already answered.").catch(() => {});
        return "ignored";
      }
      text = option;
      await this.store.saveConversation(provider.id, message.chat, userId, { thread_id: threadId, pending_question: null });
      // The question keeps its text and shows the choice; its buttons go, so it cannot be answered twice.
      await ctx.out
        .edit(message.chat, message.button.messageId, { text: `${pending?.question ?? ""}\n\n✔ ${option}`.trim() })
        .catch(() => {});
    } else if (pending && !pending.approval && !command) {
      // A typed answer to a pending question: its buttons go (it cannot be answered twice), and a number picks an option.
      await this.store.saveConversation(provider.id, message.chat, userId, { thread_id: threadId, pending_question: null });
      if (provider.capabilities.buttons) await ctx.out.edit(message.chat, pending.message_id, { text: pending.question }).catch(() => {});
      text = pickedOption(stripLeadingMention(text), pending.options) ?? text;
    }
    text = stripLeadingMention(text);
    const uploads = await this.takeUploads(ctx, current.threadId, userId);
    if (text.trim() === "" && uploads === 0) return "ignored";
    await answerWithRun(ctx, { ...current, text: text.trim() === "" ? "(see the uploaded files)" : text });
    return "answered";
  }

  /** Turns the message's files into uploads of the thread; refuses ones over `max_upload_bytes`. */
  private async takeUploads(ctx: EventContext, threadId: string, userId: string): Promise<number> {
    const files = ctx.message.files ?? [];
    if (files.length === 0 || !ctx.provider.download) return 0;
    const dir = await mkdtemp(join(tmpdir(), "antler-channel-"));
    let count = 0;
    try {
      await this.client.createThread({ threadId, userId });
      for (const file of files) {
        if (file.size !== undefined && file.size > this.config.max_upload_bytes) {
          await ctx.reply(
            `${file.name} is larger than the ${this.config.max_upload_bytes} bytes I accept; it was not uploaded.`,
            `upload:${file.id}`,
          );
          continue;
        }
        const bytes = await ctx.provider.download(file);
        if (bytes.byteLength > this.config.max_upload_bytes) continue;
        const name = basename(file.name) || `file-${count + 1}`;
        const path = join(dir, name);
        await writeFile(path, bytes);
        await this.client.uploadFile(threadId, path, { userId, filename: name });
        count += 1;
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return count;
  }

  /** Stops taking events; handlers in flight finish. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.recovery) clearInterval(this.recovery);
    this.recovery = undefined;
    await this.idle();
  }
}

/** An approval button's decision; undefined for a value that is not one. */
function buttonDecision(value: string): { decision: "approve" | "reject"; reason?: string } | undefined {
  if (value === APPROVE_VALUE) return { decision: "approve" };
  if (value === REJECT_VALUE) return { decision: "reject" };
  return undefined;
}

/** A typed decision: `approve` (or yes), `reject` / `reject: <reason>` (or no, deny); anything else is none. */
function typedDecision(text: string): { decision: "approve" | "reject"; reason?: string } | undefined {
  const match = /^\s*(approve|approved|yes|reject|rejected|deny|denied|no)\b\s*[:\-–]?\s*([\s\S]*)$/i.exec(text);
  if (!match) return undefined;
  const word = (match[1] ?? "").toLowerCase();
  const rest = (match[2] ?? "").trim();
  if (word === "approve" || word === "approved" || word === "yes") return rest === "" ? { decision: "approve" } : undefined;
  return rest === "" ? { decision: "reject" } : { decision: "reject", reason: rest };
}

/** "@antler_bot what now" → "what now": the mention that addressed the bot is not part of the question. */
function stripLeadingMention(text: string): string {
  return text.replace(/^\s*@[A-Za-z0-9_]+[\s,:]*/, "");
}

/** "2" or "2." answers a numbered question with its second option; anything else is an answer in words. */
function pickedOption(text: string, options: readonly string[]): string | undefined {
  const number = /^\s*(\d{1,2})\.?\s*$/.exec(text);
  return number ? options[Number(number[1]) - 1] : undefined;
}
