import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import duckduckgoToolsPlugin from "../src/index.js";
import { CHALLENGE_REPLY, type FakeDuckDuckGo, startFakeDuckDuckGo } from "./fake-duckduckgo.js";

describe("DuckDuckGo through @antler/tools-web's web_search", () => {
  let ddg: FakeDuckDuckGo;
  beforeAll(async () => {
    ddg = await startFakeDuckDuckGo();
  });
  afterAll(() => ddg.close());
  beforeEach(() => {
    ddg.requests.length = 0;
  });

  const { tool, invoke } = webToolsHarness({
    providerPlugin: duckduckgoToolsPlugin,
    providerConfig: () => ({ base_url: ddg.url }),
    webOptions: { sleep: async () => {} },
    webConfig: { search: "duckduckgo", fetch: null, retry: { attempts: 3, initial_delay_ms: 1, max_delay_ms: 5000 } },
  });
  const text = (m: { content: unknown }) => String(m.content);

  it("returns decoded result URLs across two pages, without the ad", async () => {
    const message = await invoke(await tool("web_search"), { query: "rust", max_results: 4 });
    expect(message.status).toBe("success");
    const body = JSON.parse(text(message)) as { results: Array<Record<string, string>> };
    expect(body.results.map((r) => r.url)).toEqual([
      "https://www.rust-lang.org/",
      "https://doc.rust-lang.org/book/",
      "https://en.wikipedia.org/wiki/Rust_(programming_language)",
      "https://github.com/rust-lang/rust",
    ]);
    expect(text(message)).not.toContain("duckduckgo.com/l/");
    expect(text(message)).not.toContain("Sponsored");
    expect(ddg.requests).toHaveLength(2);
    expect(ddg.requests.map((r) => r.headers["x-trace-id"])).toEqual([expect.stringMatching(/^\S+$/), expect.stringMatching(/^\S+$/)]);
  });

  it("retries after the bot challenge and returns the results that follow", async () => {
    ddg.queue(CHALLENGE_REPLY);
    const message = await invoke(await tool("web_search"), { query: "rust", max_results: 3 });
    expect(message.status).toBe("success");
    expect(ddg.requests).toHaveLength(2);
  });

  it("reports the bot challenge as a rate limit once every try met it", async () => {
    ddg.queue(CHALLENGE_REPLY, CHALLENGE_REPLY, CHALLENGE_REPLY);
    const message = await invoke(await tool("web_search"), { query: "rust" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("duckduckgo is rate limiting (HTTP 429) after 3 tries");
    expect(ddg.requests).toHaveLength(3);
  });

  it("a 503 on every try is reported without any key advice (DuckDuckGo has no key)", async () => {
    const failure = { status: 503, body: "Service Unavailable" };
    ddg.queue(failure, failure, failure);
    const message = await invoke(await tool("web_search"), { query: "rust" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 503");
    expect(text(message)).not.toMatch(/API key/);
  });

  it("an endpoint that does not answer within timeout_seconds gives a timeout ToolMessage", async () => {
    ddg.queue({ status: 200, body: "", delayMs: 5000 });
    const message = await invoke(await tool("web_search", {}, { timeout_seconds: 0.3 }), { query: "rust" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("duckduckgo did not answer within 0.3 s");
  });
});

runPluginConformance(duckduckgoToolsPlugin, {
  validConfig: { region: "de-de", safesearch: "off", time_range: "month" },
  invalidConfigs: [{ region: "germany" }, { max_pages: 0 }, { time_range: "decade" }, { api_key: "x" }],
  dependencies: [createWebToolsPlugin()],
});
