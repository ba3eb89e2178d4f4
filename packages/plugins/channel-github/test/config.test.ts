import { describe, expect, it } from "vitest";
import { githubConfigSchema, parseIssueChat } from "../src/index.js";
import { rateLimitWaitMs } from "../src/provider.js";

const base = { token: "ghp_x", webhook_secret: "s", bot_login: "antler-bot" };

describe("github channel config", () => {
  it("fills the defaults", () => {
    const config = githubConfigSchema.parse(base);
    expect(config.api_url).toBe("https://api.github.com");
    expect(config.edit_interval_ms).toBe(2000);
  });

  it("refuses a missing webhook secret and a bad login with messages that say what to write", () => {
    const missing = githubConfigSchema.safeParse({ ...base, webhook_secret: "" });
    expect(missing.success).toBe(false);
    expect(JSON.stringify(missing.error?.issues)).toContain("GITHUB_WEBHOOK_SECRET");
    const login = githubConfigSchema.safeParse({ ...base, bot_login: "@antler bot" });
    expect(login.success).toBe(false);
    expect(githubConfigSchema.safeParse({ ...base, repository: "no-slash" }).success).toBe(false);
  });
});

describe("github chat ids", () => {
  it("reads owner/name#number, and a bare number in the configured repository", () => {
    expect(parseIssueChat("octo/demo#12")).toEqual({ owner: "octo", repo: "demo", issue_number: 12 });
    expect(parseIssueChat("12", "octo/other")).toEqual({ owner: "octo", repo: "other", issue_number: 12 });
  });

  it("refuses a chat id that names no issue, saying how to write one", () => {
    expect(() => parseIssueChat("12")).toThrow(/owner\/name#<number>.*repository/);
    expect(() => parseIssueChat("octo/demo")).toThrow(/is not an issue/);
  });
});

describe("github rate limits", () => {
  const now = 1_700_000_000_000;
  it("reads Retry-After, then x-ratelimit-reset, and leaves permission 403s alone", () => {
    expect(rateLimitWaitMs({ status: 429, response: { headers: { "retry-after": "3" } } }, now)).toBe(3000);
    const reset = { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(now / 1000 + 7) };
    expect(rateLimitWaitMs({ status: 403, response: { headers: reset } }, now)).toBe(7000);
    expect(rateLimitWaitMs({ status: 403, message: "You have exceeded a secondary rate limit", response: { headers: {} } }, now)).toBe(
      60_000,
    );
    expect(rateLimitWaitMs({ status: 403, message: "Resource not accessible by integration", response: { headers: {} } }, now)).toBe(
      undefined,
    );
    expect(rateLimitWaitMs({ status: 500 }, now)).toBe(undefined);
  });
});
