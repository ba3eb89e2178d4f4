import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type CodePlugin, definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import type { BaseMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { ChannelProvider, ChannelSink } from "../contract.js";
import { CHANNELS, type ChannelsHost, registerChannel } from "../host.js";
import channelsPlugin from "../plugin.js";
import type { ChannelRuntime } from "../runtime.js";

/** A message the bot posted, as the platform shows it now (after edits). */
export interface PlatformMessage {
  id: string;
  /** The text as the platform holds it (its own format: HTML, mrkdwn ...). */
  text: string;
  buttons: Array<{ label: string; value: string }>;
}

/** Who sends what, where: the kit's view of a user's message. */
export interface TestUserMessage {
  chatId: string;
  chatKind: "direct" | "group";
  /** The platform user id: the kit uses decimal digits, so platforms with numeric ids take it as it is. */
  userId: string;
  text: string;
  /** In a group: the message mentions the bot. */
  mentioned?: boolean;
}

/**
 * The test double of a platform, driven by the kit. It speaks the platform's real wire API (a loopback server the
 * provider is pointed at) and delivers events the way the provider receives them in the mode under test.
 */
export interface ChannelTestPlatform {
  /** A user's message: a webhook request to `provider.webhook(request, sink)`, or an event queued for `receive`. */
  userSends(message: TestUserMessage, sink: ChannelSink): Promise<{ eventId: string }>;
  /** The same event again, as the platform retries it. */
  redeliver(eventId: string, sink: ChannelSink): Promise<void>;
  /** A press of the button with `value` under the bot's message `messageId`. */
  userPresses(press: Omit<TestUserMessage, "text"> & { messageId: string; value: string }, sink: ChannelSink): Promise<{ eventId: string }>;
  /** The bot's messages in a chat, oldest first. */
  messages(chatId: string): Promise<PlatformMessage[]>;
  /** The platform refuses the next send with a rate limit (429 and its retry-after form). */
  rateLimitNextSend(retryAfterSeconds: number): void;
  /** A webhook request with a bad signature or token (webhook providers): the provider must answer 401. */
  forgedWebhookRequest?(): Request;
}

export interface ChannelConformanceSubject {
  provider: ChannelProvider;
  platform: ChannelTestPlatform;
}

export interface ChannelConformanceOptions {
  /** A fresh provider and its platform; called once for the suite. */
  create: () => Promise<ChannelConformanceSubject>;
  /** Cleans up after the suite (loopback servers). */
  close?: () => Promise<void>;
  /** Label in the describe title; default the provider's id. */
  name?: string;
  /** Per-test timeout in ms; default 30 000. */
  timeoutMs?: number;
  /**
   * Opt-in: the plugin that pauses runs for approval (`@antler/plugin-guardrails`' default export). The kit then
   * adds a `conformance_deploy` tool and an `approval:` rule for it, and checks that the pause is asked with
   * Approve / Reject buttons (or as a typed question) and that the answer resumes the same run.
   */
  approvalPlugin?: CodePlugin;
}

const USER = "conformance-user";

/** The tool the approval case's rule pauses on; `runs()` counts its runs, so the test sees it ran once. */
function deployTool() {
  let count = 0;
  const plugin = definePlugin({
    name: "channel-conformance-deploy",
    version: "0.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.tools.add(
        defineTool({
          name: "conformance_deploy",
          description: "Deploys to a target.",
          schema: z.object({ target: z.string() }),
          run: async ({ target }) => `deployed to ${target} (#${++count})`,
        }),
      );
    },
  });
  return { plugin, runs: () => count };
}

function script(messages: BaseMessage[]) {
  const human = messages.filter((m) => m.getType() === "human").at(-1);
  const text = typeof human?.content === "string" ? human.content : "";
  const last = messages.at(-1) as (BaseMessage & { name?: string }) | undefined;
  if (last?.getType() === "tool" && last.name === "conformance_deploy") return { text: `Deploy finished: ${String(last.content)}` };
  if (last?.getType() !== "human") return { text: "Done." };
  if (/^(left|right)$/.test(text.trim())) return { text: `Going ${text.trim()}.` };
  if (/deploy/i.test(text)) return { toolCalls: [{ name: "conformance_deploy", args: { target: "prod" } }] };
  if (/which way/i.test(text)) {
    return {
      toolCalls: [
        { name: "ask_clarification", args: { question: "Which way?", clarification_type: "approach_choice", options: ["left", "right"] } },
      ],
    };
  }
  return { text: `You said ${text.replace(/^@\S+\s*/, "")}` };
}

/**
 * The shared suite every channel provider passes. It runs the real channels runtime and `AntlerClient` (SQLite,
 * a scripted model) against the provider and the platform double, through the contract only:
 *
 * ```ts
 * runChannelConformance({ create: async () => ({ provider: new MyProvider(...), platform: myPlatform }), close });
 * ```
 */
export function runChannelConformance(options: ChannelConformanceOptions): void {
  const timeout = options.timeoutMs ?? 30_000;
  describe(`channel conformance${options.name ? `: ${options.name}` : ""}`, () => {
    let subject: ChannelConformanceSubject;
    let client: AntlerClient;
    let host: ChannelsHost;
    let runtime: ChannelRuntime;
    let sink: ChannelSink;
    let stopReceiving: (() => Promise<void>) | undefined;
    let dir: string;
    let chatSeq = 0;
    const deploy = deployTool();
    const chat = (kind: "direct" | "group" = "direct") => `${kind === "group" ? "-" : ""}${9_100_000 + ++chatSeq}`;

    /** Waits until the event is handled (journaled and answered, ignored or failed). */
    const handled = async (eventId: string) => {
      for (let i = 0; i < timeout / 20; i++) {
        const row = await host.store.event(subject.provider.id, eventId);
        if (row && (row.status === "answered" || row.status === "ignored" || row.status === "failed")) {
          await runtime.idle();
          return row;
        }
        await sleep(20);
      }
      throw new Error(`event ${eventId} was not handled in ${timeout} ms`);
    };
    const texts = async (chatId: string) => (await subject.platform.messages(chatId)).map((m) => m.text);

    beforeAll(async () => {
      subject = await options.create();
      dir = mkdtempSync(join(tmpdir(), "antler-channel-conformance-"));
      const provider = subject.provider;
      const register = definePlugin({
        name: "channel-under-test",
        version: "0.0.0",
        kernel: "^0.1.0",
        dependsOn: ["@antler/plugin-channels"],
        setup(ctx) {
          registerChannel(ctx, provider);
        },
      });
      client = await AntlerClient.create({
        config: {
          base_dir: dir,
          models: [{ name: "m", provider: "scripted" }],
          storage: { backend: "sqlite" },
          title: { enabled: false },
          logging: { level: "error" },
          ...(options.approvalPlugin
            ? { approval: { rules: [{ name: "deploys", tools: ["conformance_deploy"], reason: "Deploys need a yes" }] } }
            : {}),
        },
        plugins: [
          ...(options.approvalPlugin ? [options.approvalPlugin, deploy.plugin] : []),
          scriptedModelsPlugin({ m: { respond: script } }),
          { plugin: channelsPlugin, config: { stream: { edit_interval_ms: 200 }, recovery_interval_seconds: 3600 } },
          register,
        ],
        cwd: dir,
        env: {},
        discover: false,
      });
      host = client.kernel.scope.resolve(CHANNELS);
      runtime = host.runtime(client);
      sink = runtime.sink(provider.id);
      if (provider.receive) stopReceiving = host.startReceiving(client);
    }, timeout);

    afterAll(async () => {
      await stopReceiving?.();
      await client?.close();
      await options.close?.();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }, timeout);

    it("declares an id, its capabilities and at least one delivery mode", () => {
      expect(subject.provider.id).toMatch(/^[a-z0-9][a-z0-9-]{0,31}$/);
      const caps = subject.provider.capabilities;
      expect(typeof caps.edits).toBe("boolean");
      expect(typeof caps.buttons).toBe("boolean");
      expect(typeof caps.files).toBe("boolean");
      expect(caps.maxTextLength).toBeGreaterThan(0);
      expect(Boolean(subject.provider.webhook) || Boolean(subject.provider.receive)).toBe(true);
      if (caps.edits) expect(typeof subject.provider.edit).toBe("function");
      if (caps.files) expect(typeof subject.provider.sendFile).toBe("function");
    });

    it(
      "send posts a message the platform shows, and edit replaces its text",
      async () => {
        const chatId = chat();
        const sent = await subject.provider.send({ id: chatId, kind: "direct" }, { text: "first words" });
        expect(sent.messageId).toBeTruthy();
        expect((await texts(chatId)).join("\n")).toContain("first words");
        if (subject.provider.capabilities.edits) {
          await subject.provider.edit?.({ id: chatId, kind: "direct" }, sent.messageId, { text: "second words" });
          const shown = await texts(chatId);
          expect(shown).toHaveLength(1);
          expect(shown[0]).toContain("second words");
        }
      },
      timeout,
    );

    it(
      "a bound user's direct message is journaled, run, and answered in the chat",
      async () => {
        const chatId = chat();
        await host.store.bind(subject.provider.id, "501", USER);
        const { eventId } = await subject.platform.userSends({ chatId, chatKind: "direct", userId: "501", text: "hello there" }, sink);
        const row = await handled(eventId);
        expect(row.status).toBe("answered");
        expect(row.user_id).toBe(USER);
        expect((await texts(chatId)).at(-1)).toContain("You said hello there");
        const run = await client.getRun(row.thread_id as string, row.run_id as string, { userId: USER });
        expect(run.status).toBe("success");
        expect(run.trace_id).toBe(row.trace_id);
      },
      timeout,
    );

    it(
      "an unbound user gets a how-to-connect reply and no run",
      async () => {
        const chatId = chat();
        const { eventId } = await subject.platform.userSends({ chatId, chatKind: "direct", userId: "599", text: "anyone?" }, sink);
        const row = await handled(eventId);
        expect(row.run_id).toBeNull();
        expect((await texts(chatId)).at(-1)).toContain("/connect");
      },
      timeout,
    );

    it(
      "a re-delivered event is answered once",
      async () => {
        const chatId = chat();
        await host.store.bind(subject.provider.id, "502", USER);
        const { eventId } = await subject.platform.userSends({ chatId, chatKind: "direct", userId: "502", text: "just once" }, sink);
        await handled(eventId);
        await subject.platform.redeliver(eventId, sink);
        await subject.platform.redeliver(eventId, sink);
        const second = await subject.platform.userSends({ chatId, chatKind: "direct", userId: "502", text: "marker after" }, sink);
        await handled(second.eventId);
        const shown = await texts(chatId);
        expect(shown.filter((t) => t.includes("You said just once"))).toHaveLength(1);
        expect(shown.at(-1)).toContain("You said marker after");
      },
      timeout,
    );

    it(
      "in a group, a message without a mention is ignored and one with a mention is answered",
      async () => {
        const chatId = chat("group");
        await host.store.bind(subject.provider.id, "503", USER);
        const quiet = await subject.platform.userSends({ chatId, chatKind: "group", userId: "503", text: "side talk" }, sink);
        expect((await handled(quiet.eventId)).status).toBe("ignored");
        const loud = await subject.platform.userSends(
          { chatId, chatKind: "group", userId: "503", text: "answer me", mentioned: true },
          sink,
        );
        expect((await handled(loud.eventId)).status).toBe("answered");
        const shown = await texts(chatId);
        expect(shown).toHaveLength(1);
        expect(shown[0]).toContain("You said answer me");
      },
      timeout,
    );

    it(
      "clarification options become buttons (or a typed question), and the answer resumes the thread",
      async () => {
        const chatId = chat();
        await host.store.bind(subject.provider.id, "504", USER);
        const asked = await subject.platform.userSends({ chatId, chatKind: "direct", userId: "504", text: "which way now?" }, sink);
        const row = await handled(asked.eventId);
        const question = (await subject.platform.messages(chatId)).at(-1);
        expect(question?.text).toContain("Which way?");
        let answer: { eventId: string };
        if (subject.provider.capabilities.buttons) {
          expect(question?.buttons.map((b) => b.label)).toEqual(["left", "right"]);
          const right = question?.buttons.find((b) => b.label === "right");
          answer = await subject.platform.userPresses(
            { chatId, chatKind: "direct", userId: "504", messageId: question?.id as string, value: right?.value as string },
            sink,
          );
        } else {
          answer = await subject.platform.userSends({ chatId, chatKind: "direct", userId: "504", text: "right" }, sink);
        }
        const answered = await handled(answer.eventId);
        expect(answered.status).toBe("answered");
        expect(answered.thread_id).toBe(row.thread_id);
        expect((await texts(chatId)).at(-1)).toContain("Going right.");
      },
      timeout,
    );

    it(
      "a rate-limited send is retried after the platform's retry-after and delivered once",
      async () => {
        const chatId = chat();
        await host.store.bind(subject.provider.id, "505", USER);
        subject.platform.rateLimitNextSend(1);
        const { eventId } = await subject.platform.userSends({ chatId, chatKind: "direct", userId: "505", text: "slow down" }, sink);
        expect((await handled(eventId)).status).toBe("answered");
        const shown = await texts(chatId);
        expect(shown.filter((t) => t.includes("You said slow down"))).toHaveLength(1);
      },
      timeout,
    );

    it(
      "an approval pause is asked with Approve / Reject (or typed), and the answer resumes the same run once",
      async (test) => {
        // reason: approvals need the guardrails plugin, which a provider's suite passes only when it opts in.
        if (!options.approvalPlugin) return test.skip("no approvalPlugin given: the provider's suite does not test approvals");
        const chatId = chat();
        await host.store.bind(subject.provider.id, "506", USER);
        const asked = await subject.platform.userSends({ chatId, chatKind: "direct", userId: "506", text: "deploy it" }, sink);
        const row = await handled(asked.eventId);
        const paused = await client.getRun(row.thread_id as string, row.run_id as string, { userId: USER });
        expect(paused.status).toBe("paused");
        const question = (await subject.platform.messages(chatId)).at(-1);
        expect(question?.text).toContain("conformance_deploy");
        const before = deploy.runs();
        let answer: { eventId: string };
        if (subject.provider.capabilities.buttons) {
          expect(question?.buttons.map((b) => b.label)).toEqual(["Approve", "Reject"]);
          const approve = question?.buttons.find((b) => b.label === "Approve");
          answer = await subject.platform.userPresses(
            { chatId, chatKind: "direct", userId: "506", messageId: question?.id as string, value: approve?.value as string },
            sink,
          );
        } else {
          answer = await subject.platform.userSends({ chatId, chatKind: "direct", userId: "506", text: "approve" }, sink);
        }
        const resumed = await handled(answer.eventId);
        expect(resumed.status).toBe("answered");
        expect(resumed.run_id).toBe(row.run_id);
        const run = await client.getRun(row.thread_id as string, row.run_id as string, { userId: USER });
        expect(run.status).toBe("success");
        expect(run.trace_id).toBe(row.trace_id);
        expect(deploy.runs()).toBe(before + 1);
        const shown = await subject.platform.messages(chatId);
        expect(shown.at(-1)?.text).toContain("Deploy finished: deployed to prod");
        // The question's buttons are gone, so it cannot be answered twice.
        expect(shown.find((m) => m.id === question?.id)?.buttons ?? []).toEqual([]);
      },
      timeout,
    );

    it(
      "a webhook request with a bad signature or token is refused with 401",
      async (test) => {
        if (!subject.provider.webhook || !subject.platform.forgedWebhookRequest) {
          // reason: a provider that receives over a socket or long polling has no webhook request to forge.
          return test.skip("the provider receives without webhooks (or the platform forges no request): there is no request to forge");
        }
        const response = await subject.provider.webhook(subject.platform.forgedWebhookRequest(), sink);
        expect(response.status).toBe(401);
      },
      timeout,
    );
  });
}
