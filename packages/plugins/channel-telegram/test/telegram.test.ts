// Telegram end to end: a real gateway and AntlerClient (SQLite, scripted model), the Telegram provider on grammY
// pointed at a loopback server that speaks the Bot API. Every update goes in as Telegram sends it (webhook POST or
// getUpdates) and every answer is read back from what the bot posted to the Bot API.
import { SCHEDULER } from "@antler/plugin-scheduler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOT, pressUpdate, textUpdate } from "./bot-api-server.js";
import { startHarness, type TelegramHarness } from "./harness.js";

let h: TelegramHarness;
const ADA = { id: 42, username: "ada" };

beforeAll(async () => {
  h = await startHarness();
  await h.host.store.bind("telegram", String(ADA.id), "alice");
});

afterAll(async () => {
  await h?.close();
});

async function send(text: string, extra: Parameters<typeof textUpdate>[1] extends infer O ? Partial<O> : never = {}) {
  const update = textUpdate(h.tg, { text, from: ADA, ...extra });
  const response = await h.post(update);
  expect(response.status).toBe(200);
  await h.idle();
  return update;
}

async function until(probe: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("condition not met");
}

/** The bot's messages in a chat posted since `from` (an index into the chat's messages). */
const since = (chatId: number, from: number) => h.tg.chat(chatId).slice(from);

describe("telegram webhook", () => {
  it("answers a DM in one live message, edited while the run streams, ending in the final text", async () => {
    const before = h.tg.chat(ADA.id).length;
    await send("please look it up");
    const posted = since(ADA.id, before);
    expect(posted).toHaveLength(1);
    const live = posted[0];
    // Sent once, then edited: the tool line showed while the run worked, the final text replaced it.
    expect(live?.history.length).toBeGreaterThanOrEqual(2);
    expect(live?.history.some((t) => t.includes("⚙ lookup"))).toBe(true);
    expect(live?.text).toBe("The answer is <b>42</b>.");
    expect(live?.parse_mode).toBe("HTML");
  });

  it("carries one trace id from the webhook request through the run record to every Bot API call", async () => {
    const update = textUpdate(h.tg, { text: "trace me", from: ADA });
    const callsBefore = h.tg.calls.length;
    const response = await h.post(update);
    const traceId = response.headers.get("x-trace-id");
    expect(traceId).toBeTruthy();
    await h.idle();
    const event = await h.host.store.event("telegram", String(update.update_id));
    expect(event?.trace_id).toBe(traceId);
    expect(event?.status).toBe("answered");
    const run = await h.client.getRun(event?.thread_id as string, event?.run_id as string, { userId: "alice" });
    expect(run.trace_id).toBe(traceId);
    const outbound = h.tg.calls.slice(callsBefore).filter((c) => c.method !== "getUpdates");
    expect(outbound.length).toBeGreaterThan(0);
    for (const call of outbound) expect(call.traceId).toBe(traceId);
    const logged = h.logs.lines.filter((l) => l.trace_id === traceId).map((l) => l.msg);
    expect(logged).toContain("channel event journaled");
    expect(logged).toContain("channel event handled");
  });

  it("refuses a request without the right secret token with 401 and journals nothing", async () => {
    const update = textUpdate(h.tg, { text: "let me in", from: ADA });
    for (const secret of [null, "wrong-secret-token-0000000"]) {
      const response = await h.post(update, secret);
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_CHANNEL_UNAUTHORIZED");
    }
    // Refused before the body is read: even a body that is not JSON gets 401, not 400.
    const garbage = await fetch(`${h.gateway.url}/channels/telegram/webhook`, { method: "POST", body: "{not json" });
    expect(garbage.status).toBe(401);
    expect(await h.host.store.event("telegram", String(update.update_id))).toBeUndefined();
  });

  it("answers 400 to a body with a valid secret that is not an update", async () => {
    const response = await h.post({ hello: "world" });
    expect(response.status).toBe(400);
  });

  it("never runs a re-delivered update twice", async () => {
    const update = textUpdate(h.tg, { text: "only once please", from: ADA });
    const before = h.tg.chat(ADA.id).length;
    const [a, b] = await Promise.all([h.post(update), h.post(update)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    await h.idle();
    expect((await h.post(update)).status).toBe(200);
    await h.idle();
    const event = await h.host.store.event("telegram", String(update.update_id));
    const runs = await h.client.listRuns(event?.thread_id as string, { userId: "alice", limit: 100 });
    expect(runs.filter((r) => r.run_id === event?.run_id)).toHaveLength(1);
    const answers = since(ADA.id, before).filter((m) => m.text?.includes("You said: only once please"));
    expect(answers).toHaveLength(1);
    const kwargsTexts = runs.map((r) => JSON.stringify(r.kwargs)).filter((k) => k.includes(`"channel_event_id":"${update.update_id}"`));
    expect(kwargsTexts).toHaveLength(1);
  });

  it("waits out a 429 with retry_after and still sends the answer once", async () => {
    const before = h.tg.chat(ADA.id).length;
    const callsBefore = h.tg.calls.length;
    h.tg.failNext("sendMessage", 1);
    await send("rate limit me");
    const sends = h.tg.calls.slice(callsBefore).filter((c) => c.method === "sendMessage");
    expect(sends.length).toBe(2); // the refused one and its retry
    const posted = since(ADA.id, before);
    expect(posted).toHaveLength(1);
    expect(posted[0]?.text).toBe("You said: rate limit me");
    const waited = h.logs.lines.find((l) => l.msg === "channel rate-limited; waiting");
    expect(waited?.waitMs).toBe(1000);
  });

  it("turns clarification choices into an inline keyboard; a press answers the question", async () => {
    const before = h.tg.chat(ADA.id).length;
    await send("paint it a colour");
    const question = since(ADA.id, before).at(-1);
    expect(question?.text).toContain("Which colour?");
    const buttons = question?.reply_markup?.inline_keyboard.flat() ?? [];
    expect(buttons.map((b) => b.text)).toEqual(["red", "blue"]);
    const blue = buttons.find((b) => b.text === "blue");
    const press = pressUpdate(h.tg, question as NonNullable<typeof question>, blue?.callback_data as string, ADA);
    expect((await h.post(press)).status).toBe(200);
    await h.idle();
    expect(
      h.tg.callsOf("answerCallbackQuery").some((c) => c.params.callback_query_id === (press.callback_query as { id: string }).id),
    ).toBe(true);
    // The question lost its buttons and shows the choice; the answer continues the same thread.
    expect(question?.reply_markup).toBeUndefined();
    expect(question?.text).toContain("✔ blue");
    expect(h.tg.chat(ADA.id).at(-1)?.text).toBe("Painting it blue.");
    // A second press on the same question starts nothing.
    const again = pressUpdate(h.tg, question as NonNullable<typeof question>, blue?.callback_data as string, ADA);
    const count = h.tg.chat(ADA.id).length;
    await h.post(again);
    await h.idle();
    expect(h.tg.chat(ADA.id).length).toBe(count);
    expect((await h.host.store.event("telegram", String(again.update_id)))?.status).toBe("ignored");
  });

  it("takes a typed answer to a question with buttons, and removes the buttons", async () => {
    const before = h.tg.chat(ADA.id).length;
    await send("pick a colour for me");
    const question = since(ADA.id, before).at(-1);
    expect(question?.reply_markup?.inline_keyboard.flat().length).toBe(2);
    await send("red");
    expect(question?.reply_markup).toBeUndefined();
    expect(question?.text).toContain("Which colour?");
    expect(h.tg.chat(ADA.id).at(-1)?.text).toBe("Painting it red.");
  });

  it("binds a Telegram user with a one-time /connect code; unbound users are told how", async () => {
    const bob = { id: 77, username: "bob" };
    const before = h.tg.chat(bob.id).length;
    await send("hello?", { from: bob });
    expect(since(bob.id, before)[0]?.text).toContain("antler channels connect telegram");
    const { code } = await h.host.store.issueConnectCode("telegram", "bob-user", 60_000);
    await send(`/connect ${code.toLowerCase()}`, { from: bob });
    expect(h.tg.chat(bob.id).at(-1)?.text).toContain("Connected. You talk to Antler as bob-user");
    await send("who am I", { from: bob });
    expect(h.tg.chat(bob.id).at(-1)?.text).toBe("You said: who am I");
    expect((await h.host.store.binding("telegram", "77"))?.user_id).toBe("bob-user");
    // A used code is refused, also for another user.
    const carol = { id: 78, username: "carol" };
    await send(`/connect ${code}`, { from: carol });
    expect(h.tg.chat(carol.id).at(-1)?.text).toContain("unknown, used or expired");
    expect(await h.host.store.binding("telegram", "78")).toBeUndefined();
  });

  it("in a group answers only when mentioned or replied to", async () => {
    const group = { id: -100555, type: "supergroup" };
    const before = h.tg.chat(group.id).length;
    await send("just chatting", { chat: group });
    expect(h.tg.chat(group.id).length).toBe(before);
    const mention = `@${BOT.username}`;
    await send(`${mention} what now`, { chat: group, entities: [{ type: "mention", offset: 0, length: mention.length }] });
    expect(h.tg.chat(group.id).at(-1)?.text).toBe("You said: what now");
    await send("and then?", { chat: group, replyToBot: true });
    expect(h.tg.chat(group.id).at(-1)?.text).toBe("You said: and then?");
    expect(h.tg.chat(group.id).length).toBe(before + 2);
  });

  it("makes a sent document an upload of the thread that the agent sees", async () => {
    const file = h.tg.addFile("notes.txt", Buffer.from("meeting notes\n"));
    await send("what did I send? (uploaded)", { document: { ...file, mime_type: "text/plain" } });
    expect(h.tg.chat(ADA.id).at(-1)?.text).toBe("I see /mnt/user-data/uploads/notes.txt.");
  });

  it("sends the files a run presents as documents", async () => {
    const before = h.tg.chat(ADA.id).length;
    await send("write the report");
    const posted = since(ADA.id, before);
    const doc = posted.find((m) => m.document);
    expect(doc?.document?.file_name).toBe("report.md");
    expect(doc?.document?.bytes.toString("utf8")).toBe("# Report\n\nAll good.\n");
    expect(posted.some((m) => m.text === "Here is the report.")).toBe(true);
  });

  it("/new starts a new thread and /status names it", async () => {
    await send("/status");
    const first = /Thread: (\S+)/.exec(h.tg.chat(ADA.id).at(-1)?.text ?? "")?.[1];
    await send("/new");
    expect(h.tg.chat(ADA.id).at(-1)?.text).toBe("Started a new conversation.");
    await send("/status");
    const second = /Thread: (\S+)/.exec(h.tg.chat(ADA.id).at(-1)?.text ?? "")?.[1];
    expect(first).toBeTruthy();
    expect(second).toBeTruthy();
    expect(second).not.toBe(first);
    await send("/model nope");
    expect(h.tg.chat(ADA.id).at(-1)?.text).toContain('No model named "nope"');
  });

  it("/cancel stops the running answer without waiting behind it", async () => {
    const chat = { id: 4242, type: "private" };
    const slow = textUpdate(h.tg, { text: "this is slow", from: ADA, chat });
    expect((await h.post(slow)).status).toBe(200);
    await until(async () => {
      const conversation = await h.host.store.conversation("telegram", { id: "4242", kind: "direct" }, "alice");
      if (!conversation) return false;
      const runs = await h.client.listRuns(conversation.thread_id, { userId: "alice" });
      return runs.some((r) => r.status === "running");
    });
    expect((await h.post(textUpdate(h.tg, { text: "/cancel", from: ADA, chat }))).status).toBe(200);
    await h.idle();
    const texts = h.tg.chat(chat.id).map((m) => m.text);
    expect(texts).toContain("Cancelled the running answer.");
    expect(texts).toContain("Cancelled.");
    expect(texts).not.toContain("Slow answer.");
    expect((await h.host.store.event("telegram", String(slow.update_id)))?.status).toBe("answered");
  });

  it("delivers a scheduled task's answer to the owner's bound chat, once per occurrence", async () => {
    await send("hi before the schedule");
    const scheduler = h.client.kernel.scope.resolve(SCHEDULER);
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const task = await scheduler.add("alice", { prompt: "daily digest", at, deliver_to: { channel: "telegram", chat: "42" } });
    expect(task.deliver_to).toEqual({ channel: "telegram", chat: "42" });
    const before = h.tg.chat(ADA.id).length;
    const callsBefore = h.tg.calls.length;
    const run = await (await scheduler.trigger("alice", task.id)).done;
    expect(run.status).toBe("succeeded");
    const posted = since(ADA.id, before);
    expect(posted.map((m) => m.text)).toEqual(["You said: daily digest"]);
    // The push is on the occurrence's trace.
    const push = h.tg.calls.slice(callsBefore).find((c) => c.method === "sendMessage");
    expect(push?.traceId).toBe(run.trace_id);
  });

  it("refuses a deliver_to chat where the owner never talked to the bot, with a coded error", async () => {
    const scheduler = h.client.kernel.scope.resolve(SCHEDULER);
    const at = new Date(Date.now() + 3_600_000).toISOString();
    await expect(scheduler.add("alice", { prompt: "x", at, deliver_to: { channel: "telegram", chat: "-100999" } })).rejects.toMatchObject({
      code: "ANTLER_ERR_CHANNEL_NOT_BOUND",
    });
    await expect(scheduler.add("alice", { prompt: "x", at, deliver_to: { channel: "slack", chat: "C1" } })).rejects.toMatchObject({
      code: "ANTLER_ERR_CHANNEL_UNKNOWN",
    });
  });

  it("writes no message text into logs at info level", async () => {
    const marker = "zebra-secret-phrase-93";
    await send(`remember ${marker}`);
    const infoAndAbove = h.logs.lines.filter((l) => l.level !== "debug" && l.level !== "trace");
    expect(infoAndAbove.length).toBeGreaterThan(0);
    for (const line of infoAndAbove) expect(JSON.stringify(line)).not.toContain(marker);
  });
});

describe("telegram operator policy", () => {
  let p: TelegramHarness;

  beforeAll(async () => {
    p = await startHarness({
      channels: { default_user: "guest", allow: { users: ["telegram:42", "telegram:43"], chats: [], workspaces: [] } },
    });
  });

  afterAll(async () => {
    await p?.close();
  });

  it("answers an unbound but allowed user as the configured default user", async () => {
    const update = textUpdate(p.tg, { text: "hi as guest", from: { id: 43, username: "eve" } });
    expect((await p.post(update)).status).toBe(200);
    await p.idle();
    expect(p.tg.chat(43).at(-1)?.text).toBe("You said: hi as guest");
    expect((await p.host.store.event("telegram", String(update.update_id)))?.user_id).toBe("guest");
  });

  it("ignores users outside the allowlist without answering them", async () => {
    const update = textUpdate(p.tg, { text: "let me in", from: { id: 99, username: "mallory" } });
    expect((await p.post(update)).status).toBe(200);
    await p.idle();
    expect(p.tg.chat(99)).toHaveLength(0);
    expect((await p.host.store.event("telegram", String(update.update_id)))?.status).toBe("ignored");
  });
});
