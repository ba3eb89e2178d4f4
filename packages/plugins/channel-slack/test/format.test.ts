// Pure parts of the Slack provider: Markdown → mrkdwn, Slack markup → plain text, Block Kit, config, signatures.
import { runPluginConformance } from "@antler/kernel/testing";
import channels from "@antler/plugin-channels";
import { describe, expect, it } from "vitest";
import slack, { markdownToMrkdwn, slackConfigSchema, slackSignature, slackTextToPlain, toBlocks } from "../src/index.js";
import { checkSignatureHeaders, signatureMatches } from "../src/signature.js";

describe("markdownToMrkdwn", () => {
  it("turns bold, italics, strike-through and links into mrkdwn", () => {
    expect(markdownToMrkdwn("**bold** and *it* and _it2_ and ~~gone~~")).toBe("*bold* and _it_ and _it2_ and ~gone~");
    expect(markdownToMrkdwn("see [the docs](https://example.com/a?b=1)")).toBe("see <https://example.com/a?b=1|the docs>");
  });

  it("makes headings bold lines and list items bullets, and keeps quotes", () => {
    expect(markdownToMrkdwn("# Title\n- one\n  * two\n> quoted **bit**")).toBe("*Title*\n• one\n  • two\n> quoted *bit*");
  });

  it("leaves code alone (escaped, unformatted) and drops the fence's language", () => {
    expect(markdownToMrkdwn("run `a **b** <c>`\n```ts\nconst x = a && b;\n```")).toBe(
      "run `a **b** &lt;c&gt;`\n```\nconst x = a &amp;&amp; b;\n```",
    );
  });

  it("escapes &, < and > so text cannot forge a mention or link", () => {
    expect(markdownToMrkdwn("a <@U123> & <!channel>")).toBe("a &lt;@U123&gt; &amp; &lt;!channel&gt;");
  });
});

describe("slackTextToPlain", () => {
  it("reads mentions, channels, links and escapes as plain text", () => {
    expect(slackTextToPlain("hi <@U1> in <#C2|general>: <https://x.io|x> &amp; <mailto:a@b.c> &lt;3 <!here>")).toBe(
      "hi @U1 in #general: x (https://x.io) & mailto:a@b.c <3 @here",
    );
  });
});

describe("toBlocks", () => {
  it("is one mrkdwn section, then one actions block per row with the buttons' styles", () => {
    const blocks = toBlocks({
      text: "**Go?**",
      buttons: [
        [
          { label: "Approve", value: "a:approve", style: "primary" },
          { label: "Reject", value: "a:reject", style: "danger" },
        ],
      ],
    });
    expect(blocks[0]).toEqual({ type: "section", text: { type: "mrkdwn", text: "*Go?*" } });
    expect(blocks[1]).toMatchObject({
      type: "actions",
      elements: [
        { type: "button", action_id: "antler_0_0", value: "a:approve", style: "primary", text: { type: "plain_text", text: "Approve" } },
        { type: "button", action_id: "antler_0_1", value: "a:reject", style: "danger" },
      ],
    });
    expect(toBlocks({ text: "plain" })).toHaveLength(1);
  });
});

describe("slackConfigSchema", () => {
  const base = { bot_token: "xoxb-1-2-abc" };

  it("requires the signing secret in webhook mode and the app token in socket mode", () => {
    const webhook = slackConfigSchema.safeParse(base);
    expect(webhook.success).toBe(false);
    expect(webhook.error?.issues[0]?.path).toEqual(["signing_secret"]);
    const socket = slackConfigSchema.safeParse({ ...base, mode: "socket" });
    expect(socket.error?.issues[0]?.path).toEqual(["app_token"]);
    expect(slackConfigSchema.parse({ ...base, mode: "socket", app_token: "xapp-1-A-2-x" }).reply_in_thread).toBe(true);
  });

  it("refuses a token of the wrong kind with a message that says which one", () => {
    const wrong = slackConfigSchema.safeParse({ bot_token: "xapp-1-A-2-x", signing_secret: "a".repeat(32) });
    expect(wrong.error?.issues[0]?.message).toMatch(/xoxb-/);
  });
});

describe("request signatures", () => {
  const secret = "8f742231b10e8888abcd99yyyzzz85a5";
  const body = new TextEncoder().encode("token=x&command=%2Fconnect");

  it("matches Slack's v0 HMAC-SHA256 and nothing else", () => {
    const signature = slackSignature(secret, "1531420618", body);
    expect(signature).toMatch(/^v0=[0-9a-f]{64}$/);
    expect(signatureMatches(secret, "1531420618", body, signature)).toBe(true);
    expect(signatureMatches(secret, "1531420619", body, signature)).toBe(false);
    expect(signatureMatches("other-secret-0000000000", "1531420618", body, signature)).toBe(false);
  });

  it("refuses missing headers and timestamps outside the window before the body is read", () => {
    const now = 1_700_000_000_000;
    const headers = (ts: string) => new Headers({ "x-slack-request-timestamp": ts, "x-slack-signature": "v0=00" });
    expect(checkSignatureHeaders(new Headers(), 300, now)).toBe("missing headers");
    expect(checkSignatureHeaders(headers(String(now / 1000 - 301)), 300, now)).toBe("stale timestamp");
    expect(checkSignatureHeaders(headers(String(now / 1000 + 301)), 300, now)).toBe("stale timestamp");
    expect(checkSignatureHeaders(headers(String(now / 1000 - 299)), 300, now)).toEqual({
      timestamp: String(now / 1000 - 299),
      signature: "v0=00",
    });
  });
});

runPluginConformance(slack, {
  dependencies: [channels],
  validConfig: { bot_token: "xoxb-1-2-abc", signing_secret: "a".repeat(32) },
  invalidConfigs: [
    { bot_token: "xoxb-1-2-abc" },
    { bot_token: "xoxb-1-2-abc", mode: "socket" },
    { bot_token: "not-a-token", signing_secret: "a".repeat(32) },
    { bot_token: "xoxb-1-2-abc", signing_secret: "a".repeat(32), timestamp_tolerance_seconds: 3600 },
  ],
});
