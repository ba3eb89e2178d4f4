import { runPluginConformance } from "@antler/kernel/testing";
import channels from "@antler/plugin-channels";
import { describe, expect, it } from "vitest";
import telegram, { markdownToTelegramHtml, telegramConfigSchema } from "../src/index.js";

describe("telegram config", () => {
  it("refuses webhook mode without a webhook_secret, saying why and what to write", () => {
    const result = telegramConfigSchema.safeParse({ token: "123:abc", mode: "webhook" });
    expect(result.success).toBe(false);
    const issue = result.error?.issues[0];
    expect(issue?.path).toEqual(["webhook_secret"]);
    expect(issue?.message).toContain("$TELEGRAM_WEBHOOK_SECRET");
  });

  it("refuses a token that is not a bot token, and a secret Telegram would not accept", () => {
    expect(telegramConfigSchema.safeParse({ token: "not a token", mode: "polling" }).error?.issues[0]?.path).toEqual(["token"]);
    const short = telegramConfigSchema.safeParse({ token: "123:abc", mode: "webhook", webhook_secret: "short" });
    expect(short.error?.issues[0]?.path).toEqual(["webhook_secret"]);
  });

  it("takes polling mode without a secret, with defaults", () => {
    const config = telegramConfigSchema.parse({ token: "123:abc", mode: "polling" });
    expect(config.api_root).toBe("https://api.telegram.org");
    expect(config.poll_timeout_seconds).toBe(25);
  });
});

describe("markdown to Telegram HTML", () => {
  it("converts emphasis, code, links, headings and lists, and escapes HTML", () => {
    const html = markdownToTelegramHtml(
      "# Title\n**bold** and *it* and `a<b>` and [site](https://example.com/?a=1&b=2)\n- one\n- two\n<script>x</script>",
    );
    expect(html).toBe(
      '<b>Title</b>\n<b>bold</b> and <i>it</i> and <code>a&lt;b&gt;</code> and <a href="https://example.com/?a=1&amp;b=2">site</a>\n• one\n• two\n&lt;script&gt;x&lt;/script&gt;',
    );
  });

  it("keeps fenced code as it is, escaped, with its language", () => {
    expect(markdownToTelegramHtml("```ts\nconst a = 1 < 2 && **x**;\n```")).toBe(
      '<pre><code class="language-ts">const a = 1 &lt; 2 &amp;&amp; **x**;</code></pre>',
    );
  });

  it("leaves snake_case words and lone asterisks alone", () => {
    expect(markdownToTelegramHtml("use snake_case_name and 2 * 3 * 4")).toBe("use snake_case_name and 2 * 3 * 4");
  });
});

runPluginConformance(telegram, {
  dependencies: [channels],
  validConfig: { token: "123:abc", mode: "webhook", webhook_secret: "a-secret-of-16-chars-or-more" },
  invalidConfigs: [
    { token: "123:abc", mode: "webhook" },
    { token: "nope", mode: "polling" },
    { token: "123:abc", mode: "carrier-pigeon" },
  ],
});
