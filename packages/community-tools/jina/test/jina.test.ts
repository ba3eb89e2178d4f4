import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { type LoopbackServer, runWebToolConformance, startLoopbackServer, stubLookup, webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import jinaPlugin from "../src/index.js";

const KEY = "jina_test_0123456789";

// Jina Reader's JSON answers (Accept: application/json).
const readerAnswer = (data: Record<string, unknown>) => ({ code: 200, status: 20000, data: { ...data, usage: { tokens: 1234 } } });
const readerError = (status: number, message: string) => ({
  data: null,
  code: status,
  name: status === 401 ? "AuthenticationFailedError" : "ServiceError",
  status: status * 100 + 3,
  message,
  readableMessage: `${status}: ${message}`,
});

runWebToolConformance({
  provider: "jina",
  apiKeyEnv: "JINA_API_KEY",
  plugins: (serverUrl) => [{ plugin: jinaPlugin, config: { api_key: KEY, base_url: serverUrl } }],
  vendor: {
    fetch: (page, request) =>
      request.method === "POST" && request.path === "/"
        ? { body: readerAnswer({ title: page.title, description: "", url: (request.json as { url: string }).url, content: page.markdown }) }
        : { status: 404, body: readerError(404, "not found") },
    error: readerError,
  },
});

runPluginConformance(jinaPlugin, {
  validConfig: {},
  invalidConfigs: [{ timeout_seconds: 500 }, { engine: "quantum" }],
  dependencies: [createWebToolsPlugin()],
});

describe("@antler/tools-jina against a Jina-Reader-shaped loopback server", () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startLoopbackServer();
  });
  afterEach(() => {
    server.requests.length = 0;
  });
  afterAll(() => server.close());

  const web = webToolsHarness({
    providerPlugin: jinaPlugin,
    providerConfig: () => ({ base_url: server.url }),
    webOptions: { lookup: stubLookup() },
    webConfig: { fetch: "jina", retry: { attempts: 1 } },
  });
  async function fetchTool(config: Record<string, unknown>) {
    const fetch = await web.caller("web_fetch", config);
    return (url: string) => fetch({ url });
  }

  it("POSTs {url} to the reader with the Bearer key, X-Return-Format, X-Timeout, the options and the trace id", async () => {
    server.setHandler(() => ({
      body: readerAnswer({ title: "Antlers", url: "https://en.wikipedia.org/wiki/Antler", content: "Antlers are bone." }),
    }));
    const message = await (
      await fetchTool({ api_key: KEY, timeout_seconds: 20, engine: "browser", target_selector: "article", no_cache: true })
    )("https://en.wikipedia.org/wiki/Antler");
    const request = server.requests[0]!;
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/");
    expect(request.json).toEqual({ url: "https://en.wikipedia.org/wiki/Antler" });
    expect(request.headers).toMatchObject({
      authorization: `Bearer ${KEY}`,
      accept: "application/json",
      "x-return-format": "markdown",
      "x-timeout": "20",
      "x-engine": "browser",
      "x-target-selector": "article",
      "x-no-cache": "true",
      "x-retain-images": "none",
    });
    expect(request.headers["x-trace-id"]).toEqual(expect.any(String));
    expect(message.status).toBe("success");
    expect(String(message.content)).toBe("# Antlers\nURL: https://en.wikipedia.org/wiki/Antler\n\nAntlers are bone.");
  });

  it("works without a key (Jina's lower rate limit) and sends no Authorization header", async () => {
    server.setHandler(() => ({ body: readerAnswer({ title: "T", url: "https://example.org/", content: "text" }) }));
    const previous = process.env.JINA_API_KEY;
    delete process.env.JINA_API_KEY;
    try {
      const message = await (await fetchTool({}))("https://example.org/");
      expect(message.status).toBe("success");
      expect(server.requests[0]?.headers.authorization).toBeUndefined();
    } finally {
      if (previous !== undefined) process.env.JINA_API_KEY = previous;
    }
  });

  it("reports Jina's readable message when it returns no content", async () => {
    server.setHandler(() => ({ body: { code: 200, status: 20000, data: null, readableMessage: "Domain example.org is blocked" } }));
    const message = await (await fetchTool({ api_key: KEY }))("https://example.org/");
    expect(message.status).toBe("error");
    expect(String(message.content)).toContain("Jina Reader returned no content for https://example.org/: Domain example.org is blocked");
  });

  it("accepts a reader that answers plain Markdown", async () => {
    server.setHandler(() => ({
      body: "Title: Antlers\n\nMarkdown Content:\nAntlers are bone.",
      headers: { "content-type": "text/plain" },
    }));
    const message = await (await fetchTool({ api_key: KEY }))("https://example.org/antlers");
    expect(message.status).toBe("success");
    expect(String(message.content)).toContain("Antlers are bone.");
  });
});
