import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import duckduckgoToolsPlugin from "../src/index.js";
import { CHALLENGE_REPLY, type FakeDuckDuckGo, IMAGES_VQD, LONG_IMAGE_TITLE, startFakeDuckDuckGo } from "./fake-duckduckgo.js";

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

describe("DuckDuckGo through @antler/tools-web's image_search (images: duckduckgo)", () => {
  let ddg: FakeDuckDuckGo;
  beforeAll(async () => {
    ddg = await startFakeDuckDuckGo();
  });
  afterAll(() => ddg.close());
  beforeEach(() => {
    ddg.reset();
  });

  const { tool, invoke } = webToolsHarness({
    providerPlugin: duckduckgoToolsPlugin,
    providerConfig: () => ({ base_url: ddg.url, images_base_url: ddg.url, region: "us-en" }),
    webOptions: { sleep: async () => {} },
    webConfig: { search: null, fetch: null, images: "duckduckgo", retry: { attempts: 3, initial_delay_ms: 1, max_delay_ms: 5000 } },
  });
  const text = (m: { content: unknown }) => String(m.content);

  it("returns image, thumbnail, page and size for the model, after the vqd page and i.js, both traced", async () => {
    const message = await invoke(await tool("image_search"), { query: "red fox", max_results: 3 });
    expect(message.status).toBe("success");
    const body = JSON.parse(text(message)) as { provider: string; results: Array<Record<string, unknown>> };
    expect(body.provider).toBe("duckduckgo");
    expect(body.results).toHaveLength(3);
    expect(body.results[0]).toEqual({
      title: "Red fox - Wikipedia",
      image_url: "https://upload.wikimedia.org/wikipedia/commons/1/16/Red_fox_%28Vulpes_vulpes%29.jpg",
      thumbnail_url: "https://tse2.mm.bing.net/th?id=OIP.Xb1q9c0r6Rk2yEo0&pid=Api",
      source_url: "https://en.wikipedia.org/wiki/Red_fox",
      width: 2048,
      height: 1365,
    });
    expect(String(body.results[1]?.title).length).toBeLessThan(LONG_IMAGE_TITLE.length);
    expect(text(message)).not.toContain("data:image");
    expect(ddg.requests.map((r) => r.path)).toEqual(["/", "/i.js"]);
    expect(ddg.requests[1]?.query.get("vqd")).toBe(IMAGES_VQD);
    expect(ddg.requests[1]?.query.get("l")).toBe("us-en");
    const traceIds = ddg.requests.map((r) => r.headers["x-trace-id"]);
    expect(traceIds[0]).toMatch(/^\S+$/);
    expect(traceIds[1]).toBe(traceIds[0]);
  });

  it("a page without a vqd gives an error ToolMessage: DuckDuckGo refused, use another provider; not retried", async () => {
    ddg.vqdShape = "none";
    const message = await invoke(await tool("image_search"), { query: "red fox" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("image_search failed: duckduckgo");
    expect(text(message)).toContain("DuckDuckGo refused the automated request");
    expect(text(message)).toContain("plugins[@antler/tools-web].config.images");
    expect(ddg.requests).toHaveLength(1);
  });

  it("a 403 from i.js gives an error ToolMessage saying DuckDuckGo refused the automated request; not retried", async () => {
    ddg.queueFor("/i.js", { status: 403, body: "Forbidden" });
    const message = await invoke(await tool("image_search"), { query: "red fox" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 403");
    expect(text(message)).toContain("DuckDuckGo refused the automated request");
    expect(text(message)).toMatch(/brave, serper/);
    expect(text(message)).not.toMatch(/API key/);
    expect(ddg.requests.map((r) => r.path)).toEqual(["/", "/i.js"]);
  });

  it("a 418 on the image page gives the same refusal", async () => {
    ddg.queueFor("/", { status: 418, body: "" });
    const message = await invoke(await tool("image_search"), { query: "red fox" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 418");
    expect(text(message)).toContain("DuckDuckGo refused the automated request");
    expect(ddg.requests).toHaveLength(1);
  });

  it("a 503 from i.js is retried (a fresh vqd each try) and the next success returned", async () => {
    ddg.queueFor("/i.js", { status: 503, body: "Service Unavailable" });
    const message = await invoke(await tool("image_search"), { query: "red fox" });
    expect(message.status).toBe("success");
    expect(ddg.requests.map((r) => r.path)).toEqual(["/", "/i.js", "/", "/i.js"]);
  });

  it("a 503 from i.js on every try is retried, then reported as a server error", async () => {
    const failure = { status: 503, body: "Service Unavailable" };
    ddg.queueFor("/i.js", failure, failure, failure);
    const message = await invoke(await tool("image_search"), { query: "red fox" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("duckduckgo had a server error (HTTP 503) after 3 tries");
    expect(ddg.requests.filter((r) => r.path === "/i.js")).toHaveLength(3);
  });

  it("the bot challenge instead of the image page is backed off and retried like a rate limit", async () => {
    ddg.queueFor("/", CHALLENGE_REPLY);
    const message = await invoke(await tool("image_search"), { query: "red fox" });
    expect(message.status).toBe("success");
    expect(ddg.requests.map((r) => r.path)).toEqual(["/", "/", "/i.js"]);
  });
});

runPluginConformance(duckduckgoToolsPlugin, {
  validConfig: { region: "de-de", safesearch: "off", time_range: "month", images_base_url: "https://duckduckgo.com" },
  invalidConfigs: [
    { region: "germany" },
    { max_pages: 0 },
    { time_range: "decade" },
    { api_key: "x" },
    { images_base_url: "ftp://duckduckgo.com" },
  ],
  dependencies: [createWebToolsPlugin()],
});
