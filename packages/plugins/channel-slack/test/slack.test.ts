// Slack end to end: a real gateway (`antler serve`'s app) and AntlerClient (SQLite, scripted model, guardrails'
// approval), the Slack provider on @slack/web-api pointed at a loopback server that speaks the Web API. Every
// event goes in as Slack sends it (a signed POST) and every answer is read back from what the bot posted.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SlackHarness, startHarness } from "./harness.js";
import { BOT_USER, blockActions, buttonsOf, messageEvent, TEAM } from "./slack-api-server.js";

let h: SlackHarness;
const ADA = "U0ADA0001";
const DM = "D0ADA0001";

beforeAll(async () => {
  h = await startHarness({ slack: { slash_command: "/antler" } });
  await h.host.store.bind("slack", ADA, "alice");
});

afterAll(async () => {
  await h?.close();
});

async function post(request: Request, status = 200): Promise<Response> {
  const response = await h.post(request);
  expect(response.status).toBe(status);
  await h.idle();
  return response;
}

async function dm(text: string) {
  const event = messageEvent(h.slack, { channel: DM, user: ADA, text });
  const response = await post(h.slack.eventRequest(event.payload));
  return { ...event, response };
}

describe("slack webhook", () => {
  it("answers the url_verification challenge of a signed request", async () => {
    const response = await h.post(
      h.slack.eventRequest({ token: "x", challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", type: "url_verification" }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });
  });

  it("refuses a bad signature, a timestamp older than 5 minutes and unsigned requests with 401, journaling nothing", async () => {
    const forged = messageEvent(h.slack, { channel: DM, user: ADA, text: "forged" });
    const stale = messageEvent(h.slack, { channel: DM, user: ADA, text: "replayed" });
    const bare = messageEvent(h.slack, { channel: DM, user: ADA, text: "unsigned" });
    const calls = h.slack.calls.length;
    expect((await h.post(h.slack.eventRequest(forged.payload, { secret: "0".repeat(32) }))).status).toBe(401);
    const sixMinutesAgo = Math.floor(Date.now() / 1000) - 360;
    expect((await h.post(h.slack.eventRequest(stale.payload, { timestamp: sixMinutesAgo }))).status).toBe(401);
    const unsigned = await h.post(
      new Request("http://x", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(bare.payload) }),
    );
    expect(unsigned.status).toBe(401);
    expect(((await unsigned.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_CHANNEL_UNAUTHORIZED");
    await h.idle();
    for (const e of [forged, stale, bare]) expect(await h.host.store.event("slack", `${DM}:${e.ts}`)).toBeUndefined();
    expect(h.slack.calls.length).toBe(calls);
  });

  it("streams a DM's answer into one message updated with chat.update, ending in mrkdwn", async () => {
    const before = h.slack.channel(DM).length;
    await dm("please look it up");
    const posted = h.slack.channel(DM).slice(before);
    expect(posted).toHaveLength(1);
    const live = posted[0];
    expect(live?.history.length).toBeGreaterThanOrEqual(2);
    expect(live?.history.some((t) => t.includes("⚙ lookup"))).toBe(true);
    expect(live?.text).toBe("The answer is *42*.");
    expect(live?.blocks[0]).toEqual({ type: "section", text: { type: "mrkdwn", text: "The answer is *42*." } });
  });

  it("marks the message it works on with the working reaction (Slack shows bots no typing indicator)", async () => {
    const { ts } = await dm("react to me");
    // The reaction is not waited for by the answer: give it a moment on a loaded machine.
    for (let i = 0; i < 100 && !h.slack.reactions.includes(`${DM}:${ts}:eyes`); i++) await new Promise((r) => setTimeout(r, 20));
    expect(h.slack.reactions).toContain(`${DM}:${ts}:eyes`);
  });

  it("refuses a shared file over max_upload_bytes without downloading it", async () => {
    const file = h.slack.hostFile("huge.bin", Buffer.from("small really"));
    file.size = 50 * 1024 * 1024;
    const calls = h.slack.calls.length;
    const event = messageEvent(h.slack, { channel: DM, user: ADA, text: "", files: [file] });
    await post(h.slack.eventRequest(event.payload));
    expect(h.slack.channel(DM).at(-1)?.text).toContain("huge.bin is larger than the 20971520 bytes I accept");
    expect(h.slack.calls.slice(calls).some((c) => c.method === "files.info")).toBe(false);
  });

  it("carries one trace id from the webhook request through the run record to every Web API call", async () => {
    const calls = h.slack.calls.length;
    const { response, ts } = await dm("trace me");
    const traceId = response.headers.get("x-trace-id");
    expect(traceId).toBeTruthy();
    const row = await h.host.store.event("slack", `${DM}:${ts}`);
    expect(row?.trace_id).toBe(traceId);
    const run = await h.client.getRun(row?.thread_id as string, row?.run_id as string, { userId: "alice" });
    expect(run.trace_id).toBe(traceId);
    const made = h.slack.calls.slice(calls).filter((c) => c.method.startsWith("chat."));
    expect(made.length).toBeGreaterThan(0);
    for (const call of made) expect(call.traceId).toBe(traceId);
  });

  it("answers a channel mention in a thread under it, once, though Slack retries it and sends its app_mention twin", async () => {
    const channel = "C0GENERAL1";
    const text = `<@${BOT_USER}> hello team`;
    const event = messageEvent(h.slack, { channel, user: ADA, text });
    await post(h.slack.eventRequest(event.payload));
    await post(h.slack.eventRequest(event.payload, { headers: { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" } }));
    const twin = { ...event.payload, event_id: "EvTWIN0001", event: { ...(event.payload.event as object), type: "app_mention" } };
    await post(h.slack.eventRequest(twin));
    const answers = h.slack.channel(channel);
    expect(answers.map((m) => m.text)).toEqual(["You said: hello team"]);
    expect(answers[0]?.thread_ts).toBe(event.ts);
    // A reply in that thread (the bot mentioned again) continues the same Antler thread.
    const first = await h.host.store.event("slack", `${channel}:${event.ts}`);
    const reply = messageEvent(h.slack, { channel, user: ADA, text: `<@${BOT_USER}> and again`, thread_ts: event.ts });
    await post(h.slack.eventRequest(reply.payload));
    const second = await h.host.store.event("slack", `${channel}:${reply.ts}`);
    expect(second?.status).toBe("answered");
    expect(second?.thread_id).toBe(first?.thread_id);
    expect(h.slack.channel(channel).at(-1)?.thread_ts).toBe(event.ts);
    // Without a mention, a channel message is not answered.
    const quiet = messageEvent(h.slack, { channel, user: ADA, text: "side talk" });
    await post(h.slack.eventRequest(quiet.payload));
    expect((await h.host.store.event("slack", `${channel}:${quiet.ts}`))?.status).toBe("ignored");
  });

  it("honours a 429 on chat.update: no update before Retry-After has passed, and the answer still ends right", async () => {
    h.slack.failNext("chat.update", 1);
    const before = h.slack.channel(DM).length;
    const calls = h.slack.calls.length;
    await dm("look it up again");
    const updates = h.slack.calls.slice(calls).filter((c) => c.method === "chat.update");
    const limited = updates.findIndex((c) => c.status === 429);
    expect(limited).toBeGreaterThanOrEqual(0);
    const next = updates[limited + 1];
    expect(next).toBeDefined();
    expect((next?.at ?? 0) - (updates[limited]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    const posted = h.slack.channel(DM).slice(before);
    expect(posted).toHaveLength(1);
    expect(posted[0]?.text).toBe("The answer is *42*.");
  });

  it("takes a shared file as an upload (downloaded with the bot token) and sends a presented file with files upload v2", async () => {
    const file = h.slack.hostFile("notes.txt", Buffer.from("remember the milk\n"));
    const event = messageEvent(h.slack, { channel: DM, user: ADA, text: "what did I send? it is uploaded", files: [file] });
    await post(h.slack.eventRequest(event.payload));
    expect(h.slack.channel(DM).at(-1)?.text).toBe("I see /mnt/user-data/uploads/notes.txt.");
    // The private URL answers 403 without the bot token: the agent saw the file, so the download carried it.
    expect(h.slack.calls.some((c) => c.method === "files.info" && c.params.file === file.id)).toBe(true);

    await dm("write the report");
    const shared = h.slack.channel(DM).filter((m) => m.file);
    expect(shared.at(-1)?.file?.name).toBe("report.md");
    expect(shared.at(-1)?.file?.bytes.toString()).toContain("All good.");
    expect(h.slack.calls.some((c) => c.method === "files.completeUploadExternal" && c.params.channel_id === DM)).toBe(true);
  });

  it("asks an approval with Approve / Reject buttons; the press resumes the same run, and a second press is told it is answered", async () => {
    const { ts } = await dm("deploy please");
    const question = h.slack.channel(DM).at(-1);
    expect(question?.text).toContain("`deploy`");
    expect(buttonsOf(question as NonNullable<typeof question>)).toEqual([
      { label: "Approve", value: "a:approve", style: "primary" },
      { label: "Reject", value: "a:reject", style: "danger" },
    ]);
    const press = blockActions(h.slack, question as NonNullable<typeof question>, "a:approve", ADA);
    await post(h.slack.formRequest({ payload: JSON.stringify(press) }));
    const asked = await h.host.store.event("slack", `${DM}:${ts}`);
    const run = await h.client.getRun(asked?.thread_id as string, asked?.run_id as string, { userId: "alice" });
    expect(run.status).toBe("success");
    expect(h.slack.channel(DM).at(-1)?.text).toBe("Deploy said: deployed prod");
    const shown = h.slack.messages.find((m) => m.ts === question?.ts);
    expect(shown?.text).toContain("✔ Approved");
    expect(buttonsOf(shown as NonNullable<typeof shown>)).toEqual([]);
    // Slack still shows the old buttons to a client that has not refreshed: a second press changes nothing.
    const again = { ...press, actions: [{ ...(press.actions as object[])[0], action_ts: h.slack.ts() }] };
    await post(h.slack.formRequest({ payload: JSON.stringify(again) }));
    expect(h.slack.ephemeral.at(-1)?.body.text).toBe("That question was already answered.");
  });

  it("rejects an approval typed as `reject: <reason>`, and the model reads the reason", async () => {
    await dm("deploy now");
    await dm("reject: not on a Friday");
    const last = h.slack.channel(DM).at(-1)?.text ?? "";
    expect(last).toContain("Deploy said:");
    expect(last).toContain("not on a Friday");
  });

  it("takes slash commands: /connect <code> binds the sender, and the app command's text names the command", async () => {
    const { code } = await h.host.store.issueConnectCode("slack", "bob", 600_000);
    const command = (text: string, name = "/connect") =>
      h.slack.formRequest({
        command: name,
        text,
        user_id: "U0BOB0001",
        user_name: "bob",
        channel_id: "D0BOB0001",
        channel_name: "directmessage",
        team_id: TEAM,
        trigger_id: `trig.${h.slack.ts()}`,
        response_url: `${h.slack.url}/respond/cmd`,
      });
    await post(command(code));
    expect(h.slack.channel("D0BOB0001").at(-1)?.text).toContain("Connected. You talk to Antler as bob");
    expect((await h.host.store.binding("slack", "U0BOB0001"))?.user_id).toBe("bob");
    await post(command("status", "/antler"));
    expect(h.slack.channel("D0BOB0001").at(-1)?.text).toContain("Connected as bob.");
  });

  it("pushes to a DM the user talks in (a scheduled task's deliver_to) without naming the workspace; in two workspaces it asks which", async () => {
    await dm("hello before a push");
    const before = h.slack.channel(DM).length;
    await h.host.push("alice", { channel: "slack", chat: DM }, "The digest.", "slack-push-1");
    expect(
      h.slack
        .channel(DM)
        .slice(before)
        .map((m) => m.text),
    ).toEqual(["The digest."]);

    // The same chat id under a second team: a push must say which, and goes through once it does.
    await h.host.store.saveConversation("slack", { id: DM, kind: "direct", workspace: "T0OTHER02" }, "alice", { thread_id: "t-other" });
    await expect(h.host.push("alice", { channel: "slack", chat: DM }, "Which?", "slack-push-2")).rejects.toMatchObject({
      code: "ANTLER_ERR_CHANNEL_AMBIGUOUS",
      message: expect.stringContaining("2 workspaces"),
    });
    await h.host.push("alice", { channel: "slack", chat: DM, workspace: TEAM }, "Named.", "slack-push-3");
    expect(h.slack.channel(DM).at(-1)?.text).toBe("Named.");
    await expect(h.host.push("alice", { channel: "slack", chat: DM, workspace: "T0NOPE03" }, "x", "slack-push-4")).rejects.toMatchObject({
      code: "ANTLER_ERR_CHANNEL_NOT_BOUND",
    });
  });
});
