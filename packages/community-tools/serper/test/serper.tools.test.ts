import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import serperToolsPlugin from "../src/index.js";
import { type FakeSerper, serperError, startFakeSerper } from "./fake-serper.js";

const KEY = "serper-tools-key";

describe("Serper through @antler/tools-web's tools", () => {
  let serper: FakeSerper;
  beforeAll(async () => {
    serper = await startFakeSerper(KEY);
  });
  afterAll(() => serper.close());
  beforeEach(() => {
    serper.requests.length = 0;
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
  });

  const { tool, invoke } = webToolsHarness({
    providerPlugin: serperToolsPlugin,
    providerConfig: () => ({ api_key: KEY, base_url: serper.baseUrl }),
    webOptions: { sleep: async () => {} },
    webConfig: { search: "serper", images: "serper", fetch: null, retry: { attempts: 3, initial_delay_ms: 1, max_delay_ms: 5000 } },
  });
  const text = (m: { content: unknown }) => String(m.content);

  it("web_search returns the answer box and organic results, after POST /search with X-API-KEY", async () => {
    const message = await invoke(await tool("web_search"), { query: "speed of light", max_results: 3 });
    expect(message.status).toBe("success");
    const body = JSON.parse(text(message)) as { results: Array<Record<string, string>> };
    expect(body.results.map((r) => r.url)).toEqual([
      "https://en.wikipedia.org/wiki/Speed_of_light",
      "https://science.nasa.gov/ems/speed-of-light/",
      "https://www.britannica.com/science/speed-of-light",
    ]);
    expect(body.results[1]?.published_at).toBe("Mar 3, 2024");
    expect(serper.requests[0]?.path).toBe("/search");
    expect(serper.requests[0]?.headers["x-api-key"]).toBe(KEY);
    expect(serper.bodies()[0]).toEqual({ q: "speed of light", num: 3 });
    expect(serper.requests[0]?.headers["x-trace-id"]).toMatch(/^\S+$/);
  });

  it("image_search returns image, thumbnail and page URLs with sizes", async () => {
    const message = await invoke(await tool("image_search"), { query: "golden gate", max_results: 1 });
    expect(message.status).toBe("success");
    expect((JSON.parse(text(message)) as { results: unknown[] }).results).toEqual([
      {
        title: "Golden Gate Bridge at sunset",
        image_url: "https://upload.wikimedia.org/wikipedia/commons/0/0c/GoldenGateBridge-001.jpg",
        thumbnail_url: "https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcR1",
        source_url: "https://en.wikipedia.org/wiki/Golden_Gate_Bridge",
        width: 2560,
        height: 1707,
      },
    ]);
  });

  it("Serper's 403 for a wrong key becomes an error ToolMessage naming SERPER_API_KEY", async () => {
    const message = await invoke(await tool("web_search", { api_key: "wrong" }), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 403");
    expect(text(message)).toContain("key is missing or wrong");
    expect(text(message)).toContain("SERPER_API_KEY");
  });

  it("a missing key becomes an error ToolMessage naming SERPER_API_KEY, and Serper is not called", async () => {
    vi.stubEnv("SERPER_API_KEY", "");
    const message = await invoke(await tool("image_search", { api_key: undefined }), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("SERPER_API_KEY is not set");
    expect(serper.requests).toHaveLength(0);
  });

  it("a 429 is retried and the next answer is returned", async () => {
    serper.queue({ ...serperError(429, "Too many requests."), headers: { "retry-after": "0" } });
    const message = await invoke(await tool("web_search"), { query: "speed of light" });
    expect(message.status).toBe("success");
    expect(serper.requests).toHaveLength(2);
  });

  it("a 500 on every try is reported after retry.attempts tries", async () => {
    const failure = serperError(500, "Internal server error.");
    serper.queue(failure, failure, failure);
    const message = await invoke(await tool("web_search"), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 500");
    expect(serper.requests).toHaveLength(3);
  });

  it("a Serper that does not answer within timeout_seconds gives a timeout ToolMessage", async () => {
    serper.queue({ status: 200, body: {}, delayMs: 5000 });
    const message = await invoke(await tool("image_search", {}, { timeout_seconds: 0.3 }), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("serper did not answer within 0.3 s");
  });
});

runPluginConformance(serperToolsPlugin, {
  validConfig: { api_key: "k", gl: "us", hl: "en" },
  invalidConfigs: [{ base_url: "not a url" }, { max_results: 101 }, { gl: "USA" }],
  dependencies: [createWebToolsPlugin()],
});
