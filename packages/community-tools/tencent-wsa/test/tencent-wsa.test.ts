import { type WebCallContext, WebProviderHttpError } from "@antler/tools-web";
import { webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import tencentWsaToolsPlugin, { createTencentWsaProvider, mapTencentWsaResults, tencentCnt, tencentWsaConfigSchema } from "../src/index.js";
import { type FakeTencentWsa, startFakeTencentWsa, tencentError, tencentSearchBody, wsaPages } from "./fake-tencent-wsa.js";

const KEY = "wsa-test-key-7d1e";

function callContext(): WebCallContext {
  return { fetch: globalThis.fetch, signal: new AbortController().signal, traceId: "trace-wsa-test" };
}

const caps = { maxResults: 50, maxSnippetChars: 600, maxTitleChars: 200 };

describe("Tencent WSA Cnt rule", () => {
  it("leaves Cnt out up to 10, rounds up to the next multiple of 10 above it, and never asks for more than 50", () => {
    expect([1, 5, 10, 11, 19, 20, 21, 35, 41, 50, 60].map(tencentCnt)).toEqual([
      undefined,
      undefined,
      undefined,
      20,
      20,
      20,
      30,
      40,
      50,
      50,
      50,
    ]);
  });

  it("refuses a configured max_results above 50", () => {
    expect(tencentWsaConfigSchema.safeParse({ max_results: 51 }).success).toBe(false);
    expect(tencentWsaConfigSchema.safeParse({ max_results: 50 }).success).toBe(true);
  });
});

describe("Tencent WSA mapping", () => {
  it("parses Pages given as JSON strings, preferring the dynamic summary content over passage", () => {
    const body = tencentSearchBody("鹿角", [
      { title: "A", url: "https://a.example.cn/1", passage: "standard summary", content: "dynamic  summary", date: "2026-11-30" },
      { title: "B", url: "https://b.example.cn/2", passage: "only passage" },
    ]);
    expect(mapTencentWsaResults(body, caps)).toEqual([
      { title: "A", url: "https://a.example.cn/1", snippet: "dynamic summary", publishedAt: "2026-11-30" },
      { title: "B", url: "https://b.example.cn/2", snippet: "only passage", publishedAt: undefined },
    ]);
  });

  it("accepts page objects, skips malformed JSON strings, non-http URLs and repeats, and caps the count", () => {
    const body = {
      Response: {
        Pages: [
          "{not json",
          { title: "Obj", url: "https://obj.example.cn/", passage: "object entry" },
          JSON.stringify({ title: "ftp", url: "ftp://x.example.cn/", passage: "dropped" }),
          JSON.stringify({ title: "Again", url: "https://obj.example.cn/", passage: "repeat" }),
          ...wsaPages(3).map((p) => JSON.stringify(p)),
        ],
        RequestId: "r-1",
      },
    };
    const results = mapTencentWsaResults(body, { ...caps, maxResults: 3 });
    expect(results.map((r) => r.url)).toEqual([
      "https://obj.example.cn/",
      "https://news.qq.com/rain/a/202611300001",
      "https://news.qq.com/rain/a/202611300002",
    ]);
  });

  it("turns Response.Error into WebProviderHttpError with the code, message and RequestId", () => {
    const reply = tencentError("AuthFailure.InvalidAuthorization", "The API key is invalid.");
    const error = (() => {
      try {
        mapTencentWsaResults(reply.body, caps);
      } catch (e) {
        return e;
      }
    })() as WebProviderHttpError;
    expect(error).toBeInstanceOf(WebProviderHttpError);
    expect(error.status).toBe(401);
    expect(error.body).toMatch(/^AuthFailure\.InvalidAuthorization: The API key is invalid\. \(RequestId [0-9a-f-]+\)$/);
  });

  it("rejects an answer without a Response object", () => {
    expect(() => mapTencentWsaResults({ Pages: [] }, caps)).toThrow(/unexpected shape/);
  });
});

describe("Tencent WSA provider against a loopback SearchPro", () => {
  let wsa: FakeTencentWsa;
  beforeAll(async () => {
    wsa = await startFakeTencentWsa(KEY);
  });
  afterAll(() => wsa.close());
  beforeEach(() => {
    wsa.requests.length = 0;
  });

  const provider = (overrides: Record<string, unknown> = {}) =>
    createTencentWsaProvider(tencentWsaConfigSchema.parse({ base_url: wsa.url, api_key: KEY, ...overrides }));

  it("sends POST /SearchPro with a Bearer key, a JSON content type and only Query for up to 10 results", async () => {
    const results = await provider().search!("鹿角 生长", { maxResults: 5 }, callContext());
    const [req] = wsa.requests;
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/SearchPro");
    expect(req?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req?.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(wsa.bodies()[0]).toEqual({ Query: "鹿角 生长" });
    expect(results).toHaveLength(5);
    expect(results[0]).toEqual({
      title: "鹿角的生长 1",
      url: "https://news.qq.com/rain/a/202611300001",
      snippet: "鹿角每年脱落并重新生长，第 1 篇。",
      publishedAt: "2026-11-30 08:00:00",
    });
  });

  it("asks for Cnt rounded up to a multiple of 10 above 10 results, with Mode, Site and Industry when configured", async () => {
    const results = await provider({ max_results: 50, mode: 2, site: "qq.com", industry: "news" }).search!(
      "鹿角",
      { maxResults: 25 },
      callContext(),
    );
    expect(wsa.bodies()[0]).toEqual({ Query: "鹿角", Mode: 2, Site: "qq.com", Cnt: 30, Industry: "news" });
    expect(results).toHaveLength(25);
  });

  it("sends Cnt 50 at the cap and no more, whatever the model asks for", async () => {
    await provider({ max_results: 50 }).search!("鹿角", { maxResults: 500 }, callContext());
    expect(wsa.bodies()[0]?.Cnt).toBe(50);
  });

  it("keeps the request at 10 (no Cnt) when the config's max_results is 10", async () => {
    await provider({ max_results: 10 }).search!("鹿角", { maxResults: 30 }, callContext());
    expect(wsa.bodies()[0]).toEqual({ Query: "鹿角" });
  });

  it("fails without a request when no key is configured, naming TENCENTCLOUD_WSA_APIKEY", async () => {
    const keyless = createTencentWsaProvider(tencentWsaConfigSchema.parse({ base_url: wsa.url }), { env: {} });
    const error = await keyless.search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e);
    expect((error as Error).message).toContain("TENCENTCLOUD_WSA_APIKEY");
    expect(wsa.requests).toHaveLength(0);
  });
});

describe("Tencent WSA through @antler/tools-web's tools", () => {
  let wsa: FakeTencentWsa;
  let standardPlan: FakeTencentWsa;
  beforeAll(async () => {
    wsa = await startFakeTencentWsa(KEY);
    standardPlan = await startFakeTencentWsa(KEY, { premium: false });
  });
  afterAll(async () => {
    await wsa.close();
    await standardPlan.close();
  });
  beforeEach(() => {
    wsa.requests.length = 0;
    standardPlan.requests.length = 0;
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  const { tool, invoke } = webToolsHarness({
    providerPlugin: tencentWsaToolsPlugin,
    providerConfig: () => ({ api_key: KEY, base_url: wsa.url, max_results: 50 }),
    webOptions: { sleep: async () => {} },
    webConfig: { search: "tencent-wsa", fetch: null, max_results_cap: 50, retry: { attempts: 3, initial_delay_ms: 1, max_delay_ms: 5000 } },
  });
  const text = (m: { content: unknown }) => String(m.content);

  it("web_search returns 15 results from a Cnt=20 request, with X-Trace-Id", async () => {
    const message = await invoke(await tool("web_search"), { query: "鹿角", max_results: 15 });
    expect(message.status).toBe("success");
    const body = JSON.parse(text(message)) as { provider: string; results: Array<Record<string, string>> };
    expect(body.provider).toBe("tencent-wsa");
    expect(body.results).toHaveLength(15);
    expect(body.results[0]?.published_at).toBe("2026-11-30 08:00:00");
    expect(wsa.bodies()[0]).toEqual({ Query: "鹿角", Cnt: 20 });
    expect(wsa.requests[0]?.headers["x-trace-id"]).toMatch(/^\S+$/);
  });

  it("an AuthFailure error code becomes an error ToolMessage naming TENCENTCLOUD_WSA_APIKEY, not retried", async () => {
    const message = await invoke(await tool("web_search", { api_key: "wrong" }), { query: "鹿角" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 401");
    expect(text(message)).toContain("TENCENTCLOUD_WSA_APIKEY");
    expect(wsa.requests).toHaveLength(1);
  });

  it("HTTP 403 from the gateway becomes an error ToolMessage naming TENCENTCLOUD_WSA_APIKEY", async () => {
    wsa.queue({ status: 403, body: { message: "Forbidden" } });
    const message = await invoke(await tool("web_search"), { query: "鹿角" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 403");
    expect(text(message)).toContain("TENCENTCLOUD_WSA_APIKEY");
  });

  it("a plan without Cnt refuses a 20-result search, and the message names Cnt and the plan", async () => {
    const message = await invoke(await tool("web_search", { base_url: standardPlan.url }), { query: "鹿角", max_results: 20 });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("FailedOperation");
    expect(text(message)).toContain("Cnt=20");
    expect(text(message)).toContain("plan that supports it");
    expect(standardPlan.bodies()[0]).toEqual({ Query: "鹿角", Cnt: 20 });
  });

  it("the same plan serves a 10-result search, sent without Cnt", async () => {
    const message = await invoke(await tool("web_search", { base_url: standardPlan.url }), { query: "鹿角", max_results: 10 });
    expect(message.status).toBe("success");
    expect((JSON.parse(text(message)) as { results: unknown[] }).results).toHaveLength(10);
  });

  it("a missing key becomes an error ToolMessage naming TENCENTCLOUD_WSA_APIKEY, and Tencent is not called", async () => {
    vi.stubEnv("TENCENTCLOUD_WSA_APIKEY", "");
    const message = await invoke(await tool("web_search", { api_key: undefined }), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("TENCENTCLOUD_WSA_APIKEY is not set");
    expect(wsa.requests).toHaveLength(0);
  });

  it("RequestLimitExceeded is retried like a 429 and the next answer is returned", async () => {
    wsa.queue(tencentError("RequestLimitExceeded", "Too many requests."));
    const message = await invoke(await tool("web_search"), { query: "鹿角" });
    expect(message.status).toBe("success");
    expect(wsa.requests).toHaveLength(2);
  });

  it("HTTP 429 with Retry-After is retried and the next answer is returned", async () => {
    wsa.queue({ status: 429, body: { message: "rate limited" }, headers: { "retry-after": "0" } });
    const message = await invoke(await tool("web_search"), { query: "鹿角" });
    expect(message.status).toBe("success");
    expect(wsa.requests).toHaveLength(2);
  });

  it("HTTP 500 on every try is reported after retry.attempts tries", async () => {
    const failure = { status: 500, body: { message: "internal" } };
    wsa.queue(failure, failure, failure);
    const message = await invoke(await tool("web_search"), { query: "鹿角" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 500");
    expect(wsa.requests).toHaveLength(3);
  });

  it("a 200 that is not JSON becomes an error ToolMessage quoting its first bytes", async () => {
    wsa.queue({ status: 200, body: "<html>502 Bad Gateway</html>", headers: { "content-type": "text/html" } });
    const message = await invoke(await tool("web_search"), { query: "鹿角" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("not JSON");
    expect(text(message)).toContain("502 Bad Gateway");
  });

  it("a SearchPro that does not answer within timeout_seconds gives a timeout ToolMessage", async () => {
    wsa.queue({ status: 200, body: {}, delayMs: 5000 });
    const message = await invoke(await tool("web_search", {}, { timeout_seconds: 0.3 }), { query: "鹿角" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("tencent-wsa did not answer within 0.3 s");
  });
});
