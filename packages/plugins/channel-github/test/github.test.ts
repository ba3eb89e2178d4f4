// GitHub end to end: a real gateway and AntlerClient (SQLite, scripted model), the GitHub provider on Octokit
// pointed at a loopback server that speaks the REST API. Deliveries go in as GitHub sends them (signed POSTs to the
// gateway's webhook route) and every answer is read back from the comments the bot wrote.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CapturedLogs, captureLogs, type ScriptedStep, scriptedModelsPlugin } from "@antler/kernel/testing";
import channels, { CHANNELS, type ChannelsHost } from "@antler/plugin-channels";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import type { BaseMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import github from "../src/index.js";
import { BOT_LOGIN, commentDelivery, type Delivery, deliveryRequest, FakeGitHub, sign } from "./github-api-server.js";

const SECRET = "gh-webhook-secret-0123";
const EDIT_INTERVAL_MS = 300;
const ADA = { login: "ada", id: 42 };

const textOf = (m: BaseMessage | undefined) => (typeof m?.content === "string" ? m.content : "");

function script(messages: BaseMessage[]): ScriptedStep {
  const human = textOf(messages[messages.map((m) => m.getType()).lastIndexOf("human")]);
  if (messages.at(-1)?.getType() !== "human") return { text: "Done." };
  if (/^(red|blue)$/.test(human.trim())) return { text: `Painting it ${human.trim()}.` };
  if (/colour/i.test(human)) {
    return {
      toolCalls: [
        { name: "ask_clarification", args: { question: "Which colour?", clarification_type: "approach_choice", options: ["red", "blue"] } },
      ],
    };
  }
  if (/stream/i.test(human)) return { text: "A streamed **answer** that takes a while.", delayMs: 1200 };
  return { text: `You said: ${human}` };
}

let gh: FakeGitHub;
let client: AntlerClient;
let gateway: RunningGateway;
let host: ChannelsHost;
let logs: CapturedLogs;
let baseDir: string;

beforeAll(async () => {
  gh = await new FakeGitHub().start();
  baseDir = mkdtempSync(join(tmpdir(), "antler-github-"));
  logs = captureLogs({ level: "debug" });
  client = await AntlerClient.create({
    config: { base_dir: baseDir, models: [{ name: "m", provider: "scripted" }], storage: { backend: "sqlite" }, title: { enabled: false } },
    plugins: [
      scriptedModelsPlugin({ m: { respond: script } }),
      { plugin: channels, config: { stream: { edit_interval_ms: 200 }, recovery_interval_seconds: 3600 } },
      {
        plugin: github,
        config: { token: gh.token, webhook_secret: SECRET, bot_login: BOT_LOGIN, api_url: gh.url, edit_interval_ms: EDIT_INTERVAL_MS },
      },
    ],
    cwd: baseDir,
    env: {},
    discover: false,
    logger: logs.logger,
  });
  gateway = await startGateway({
    client,
    config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: "alice-key-0123456789abcdef", user: "alice" }] } },
    shutdownGraceMs: 500,
  });
  host = client.kernel.scope.resolve(CHANNELS);
  await host.store.bind("github", String(ADA.id), "alice");
});

afterAll(async () => {
  await gateway?.close();
  await client?.close();
  await gh?.close();
  if (baseDir) rmSync(baseDir, { recursive: true, force: true });
});

const hook = () => `${gateway.url}/channels/github/webhook`;
const post = (delivery: Delivery, signature?: string | null) => fetch(deliveryRequest(hook(), delivery, signature));
const idle = () => host.runtime(client).idle();

async function comment(issue: number, body: string, extra: { user?: typeof ADA & { type?: string }; pullRequest?: boolean } = {}) {
  const delivery = commentDelivery(SECRET, { issue, user: extra.user ?? ADA, body, pullRequest: extra.pullRequest ?? false });
  const response = await post(delivery);
  expect(response.status).toBe(202);
  await idle();
  return delivery;
}

const bodies = (issue: number) => gh.issueComments("octo", "demo", issue).map((c) => c.body);

describe("github issue comments", () => {
  it("answers a comment that mentions the bot in one comment, edited while the run streams", async () => {
    await comment(1, `@${BOT_LOGIN} please stream it`);
    const [answer, ...rest] = gh.issueComments("octo", "demo", 1);
    expect(rest).toHaveLength(0);
    expect(answer?.body).toBe("A streamed **answer** that takes a while.");
    expect(answer?.history.length).toBeGreaterThanOrEqual(2);
    expect(answer?.history[0]).toContain("…");
  });

  it("spaces the writes to one comment by edit_interval_ms", async () => {
    await comment(2, `@${BOT_LOGIN} stream slowly`);
    const written = gh.issueComments("octo", "demo", 2)[0]?.writtenAt ?? [];
    expect(written.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < written.length; i++) {
      expect((written[i] as number) - (written[i - 1] as number)).toBeGreaterThanOrEqual(EDIT_INTERVAL_MS - 5);
    }
  });

  it("continues the issue's thread with the next mention, on a pull request too", async () => {
    const first = await comment(3, `@${BOT_LOGIN} first turn`, { pullRequest: true });
    const second = await comment(3, `@${BOT_LOGIN} second turn`, { pullRequest: true });
    const a = await host.store.event("github", first.id);
    const b = await host.store.event("github", second.id);
    expect(a?.thread_id).toBeTruthy();
    expect(b?.thread_id).toBe(a?.thread_id);
    expect(bodies(3)).toEqual(["You said: first turn", "You said: second turn"]);
    const state = await client.getThreadState(a?.thread_id as string, { userId: "alice" });
    expect((state.values.messages as unknown[]).length).toBe(4);
  });

  it("ignores comments without the mention, edits of comments, and its own comments", async () => {
    await comment(4, "just talking among humans");
    await comment(4, `@${BOT_LOGIN} loop?`, { user: { login: BOT_LOGIN, id: 9_000_001, type: "Bot" } });
    const edited = sign(SECRET, "issue_comment", {
      ...JSON.parse(commentDelivery(SECRET, { issue: 4, user: ADA, body: `@${BOT_LOGIN} edited` }).body),
      action: "edited",
    });
    expect((await post(edited)).status).toBe(202);
    await idle();
    expect(bodies(4)).toEqual([]);
  });

  it("carries the delivery's trace id through the run record to every REST call", async () => {
    const delivery = commentDelivery(SECRET, { issue: 5, user: ADA, body: `@${BOT_LOGIN} trace me` });
    const callsBefore = gh.calls.length;
    const response = await post(delivery);
    const traceId = response.headers.get("x-trace-id");
    expect(traceId).toBeTruthy();
    await idle();
    const event = await host.store.event("github", delivery.id);
    expect(event?.trace_id).toBe(traceId);
    const run = await client.getRun(event?.thread_id as string, event?.run_id as string, { userId: "alice" });
    expect(run.trace_id).toBe(traceId);
    const calls = gh.calls.slice(callsBefore);
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call.traceId).toBe(traceId);
  });

  it("refuses a missing or wrong X-Hub-Signature-256 with 401 before reading the body, and journals nothing", async () => {
    const delivery = commentDelivery(SECRET, { issue: 6, user: ADA, body: `@${BOT_LOGIN} let me in` });
    const forged = commentDelivery("wrong-secret", { issue: 6, user: ADA, body: `@${BOT_LOGIN} let me in` });
    for (const signature of [null, "sha1=abc", forged.signature]) {
      const response = await post(delivery, signature);
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_CHANNEL_UNAUTHORIZED");
    }
    const garbage = await fetch(hook(), { method: "POST", headers: { "x-github-event": "issue_comment" }, body: "{not json" });
    expect(garbage.status).toBe(401);
    expect(await host.store.event("github", delivery.id)).toBeUndefined();
    expect(bodies(6)).toEqual([]);
  });

  it("answers 400 to a signed delivery without X-GitHub-Delivery or with a body that is not JSON", async () => {
    const notJson = sign(SECRET, "issue_comment", {});
    const request = deliveryRequest(hook(), { ...notJson, body: "{nope" }, sign(SECRET, "x", {}).signature);
    expect((await fetch(request)).status).toBe(401); // the signature covers the body: a changed body is refused
    const raw = "{nope";
    const signed = { id: "d-1", name: "issue_comment", body: raw, signature: "" };
    const { createHmac } = await import("node:crypto");
    signed.signature = `sha256=${createHmac("sha256", SECRET).update(raw).digest("hex")}`;
    expect((await post(signed)).status).toBe(400);
    expect((await post({ ...signed, id: "" })).status).toBe(400);
  });

  it("runs a redelivered webhook (same X-GitHub-Delivery) once", async () => {
    const delivery = commentDelivery(SECRET, { issue: 7, user: ADA, body: `@${BOT_LOGIN} only once` });
    const [a, b] = await Promise.all([post(delivery), post(delivery)]);
    expect([a.status, b.status]).toEqual([202, 202]);
    await idle();
    expect((await post(delivery)).status).toBe(202);
    await idle();
    expect(bodies(7)).toEqual(["You said: only once"]);
    const event = await host.store.event("github", delivery.id);
    const runs = await client.listRuns(event?.thread_id as string, { userId: "alice" });
    expect(runs).toHaveLength(1);
  });

  it("shows a question as a numbered list; a comment with the number answers it in the same thread", async () => {
    const asked = await comment(8, `@${BOT_LOGIN} pick a colour`);
    const question = bodies(8).at(-1) ?? "";
    expect(question).toContain("Which colour?");
    expect(question).toContain("1. red");
    expect(question).toContain("2. blue");
    const answered = await comment(8, `@${BOT_LOGIN} 2`);
    expect(bodies(8).at(-1)).toBe("Painting it blue.");
    expect((await host.store.event("github", answered.id))?.thread_id).toBe((await host.store.event("github", asked.id))?.thread_id);
  });

  it("waits out a 429 with Retry-After and still posts the answer once", async () => {
    const callsBefore = gh.calls.length;
    gh.failNext("create", { retryAfterSeconds: 1 });
    await comment(9, `@${BOT_LOGIN} rate limit me`);
    expect(bodies(9)).toEqual(["You said: rate limit me"]);
    const creates = gh.calls.slice(callsBefore).filter((c) => c.method === "POST");
    expect(creates.map((c) => c.status)).toEqual([429, 201]);
    expect((creates[1]?.at as number) - (creates[0]?.at as number)).toBeGreaterThanOrEqual(950);
  });

  it("honours a 403 primary rate limit until x-ratelimit-reset, without calling GitHub in between", async () => {
    const callsBefore = gh.calls.length;
    gh.failNext("create", { resetInSeconds: 2 });
    await comment(10, `@${BOT_LOGIN} out of quota`);
    expect(bodies(10)).toEqual(["You said: out of quota"]);
    const creates = gh.calls.slice(callsBefore).filter((c) => c.method === "POST");
    expect(creates.map((c) => c.status)).toEqual([403, 201]);
    expect((creates[1]?.at as number) - (creates[0]?.at as number)).toBeGreaterThanOrEqual(1000);
  });

  it("binds a GitHub user who comments /connect <code>; unbound users are told how", async () => {
    const bob = { login: "bob", id: 77 };
    await comment(11, `@${BOT_LOGIN} hello?`, { user: bob });
    expect(bodies(11).at(-1)).toContain("antler channels connect github");
    const { code } = await host.store.issueConnectCode("github", "bob-user", 60_000);
    await comment(11, `@${BOT_LOGIN} /connect ${code}`, { user: bob });
    expect(bodies(11).at(-1)).toContain("Connected. You talk to Antler as bob-user");
    expect((await host.store.binding("github", "77"))?.user_id).toBe("bob-user");
  });

  it("answers a new issue whose body mentions the bot, in that issue", async () => {
    const opened = sign(SECRET, "issues", {
      action: "opened",
      issue: { number: 12, title: "Help", body: `@${BOT_LOGIN} summarize this issue`, user: { ...ADA, type: "User" } },
      repository: { id: 77, name: "demo", full_name: "octo/demo", owner: { login: "octo", id: 5 } },
      sender: { ...ADA, type: "User" },
    });
    expect((await post(opened)).status).toBe(202);
    await idle();
    expect(bodies(12)).toEqual(["You said: summarize this issue"]);
  });

  it("answers GitHub's ping with 200 and starts nothing", async () => {
    const ping = sign(SECRET, "ping", { zen: "Keep it logically awesome.", hook_id: 1 });
    const response = await post(ping);
    expect(response.status).toBe(200);
    expect(await host.store.event("github", ping.id)).toBeUndefined();
  });
});
