import { describe, expect, it } from "vitest";
import { FeishuProvider, feishuConfigSchema } from "../src/index.js";
import { rateLimitWaitMs } from "../src/provider.js";

const base = { app_id: "cli_a1b2c3", app_secret: "s", verification_token: "t" };

describe("feishu channel config", () => {
  it("maps the domain keywords to the open API hosts", () => {
    expect(feishuConfigSchema.parse(base).domain).toBe("https://open.feishu.cn");
    expect(feishuConfigSchema.parse({ ...base, domain: "lark" }).domain).toBe("https://open.larksuite.com");
    expect(feishuConfigSchema.parse({ ...base, domain: "http://127.0.0.1:9/" }).domain).toBe("http://127.0.0.1:9");
  });

  it("refuses a missing verification token and a malformed app id with messages that say what to write", () => {
    const token = feishuConfigSchema.safeParse({ ...base, verification_token: "" });
    expect(token.success).toBe(false);
    expect(JSON.stringify(token.error?.issues)).toContain("FEISHU_VERIFICATION_TOKEN");
    const app = feishuConfigSchema.safeParse({ ...base, app_id: "12345" });
    expect(JSON.stringify(app.error?.issues)).toContain("cli_");
    expect(feishuConfigSchema.safeParse({ ...base, domain: "not a url" }).success).toBe(false);
  });
});

describe("feishu rate limits", () => {
  it("reads x-ogw-ratelimit-reset from a 429 or a frequency-limit code, and leaves other errors alone", () => {
    expect(rateLimitWaitMs({ response: { status: 429, headers: { "x-ogw-ratelimit-reset": "3" }, data: { code: 99991400 } } })).toBe(3000);
    expect(rateLimitWaitMs({ response: { status: 400, headers: {}, data: { code: 99991400 } } })).toBe(1000);
    expect(rateLimitWaitMs({ response: { status: 400, headers: {}, data: { code: 230001 } } })).toBe(undefined);
    expect(rateLimitWaitMs(new Error("socket hang up"))).toBe(undefined);
  });
});

describe("feishu URL challenge without an encrypt key", () => {
  const provider = new FeishuProvider({ config: feishuConfigSchema.parse({ ...base, domain: "http://127.0.0.1:9" }) });
  const sink = {
    accept: async () => {
      throw new Error("a challenge is not an event");
    },
  };
  const challenge = (token: string) =>
    new Request("http://127.0.0.1/channels/feishu/webhook", {
      method: "POST",
      body: JSON.stringify({ challenge: "c-123", token, type: "url_verification" }),
    });

  it("echoes the challenge when the token matches, and refuses it with 401 when it does not", async () => {
    const ok = await provider.webhook(challenge("t"), sink);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ challenge: "c-123" });
    expect((await provider.webhook(challenge("forged"), sink)).status).toBe(401);
  });

  it("answers 400 to a body that is not JSON", async () => {
    const response = await provider.webhook(new Request("http://127.0.0.1/x", { method: "POST", body: "{nope" }), sink);
    expect(response.status).toBe(400);
  });
});
