import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { parseRetryAfter, runProviderCall, WebProviderHttpError, type WebSearchProvider } from "../src/index.js";

const provider: WebSearchProvider = { name: "vendor", apiKeyEnv: "VENDOR_API_KEY", search: async () => [] };
const retry = { attempts: 3, initial_delay_ms: 100, max_delay_ms: 2000 };

function options(waits: number[], extra: Partial<Parameters<typeof runProviderCall>[0]> = {}) {
  return {
    tool: "web_search",
    provider,
    timeoutMs: 1000,
    retry,
    traceId: "t-1",
    makeFetch: () => fetch,
    sleep: async (ms: number) => {
      waits.push(ms);
    },
    ...extra,
  };
}

describe("runProviderCall: one error policy for every provider", () => {
  it("retries 5xx with exponential backoff and reports after the last try", async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await runProviderCall(options(waits), async () => {
      calls++;
      throw new WebProviderHttpError("vendor", 503, "upstream down");
    });
    expect(calls).toBe(3);
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(100);
    expect(waits[0]).toBeLessThanOrEqual(125);
    expect(waits[1]).toBeGreaterThanOrEqual(200);
    expect(waits[1]).toBeLessThanOrEqual(250);
    expect(result).toMatchObject({ ok: false, attempts: 3 });
    if (!result.ok)
      expect(result.message).toBe("web_search failed: vendor had a server error (HTTP 503) after 3 tries: upstream down. Try again later.");
  });

  it("waits what Retry-After asks, then returns the success", async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await runProviderCall(options(waits), async () => {
      calls++;
      if (calls === 1) throw new WebProviderHttpError("vendor", 429, "slow down", 1.5);
      return "ok";
    });
    expect(result).toEqual({ ok: true, value: "ok", attempts: 2 });
    expect(waits).toEqual([1500]);
  });

  it("does not wait for a Retry-After beyond max_delay_ms: reports at once, naming the wait", async () => {
    const waits: number[] = [];
    const result = await runProviderCall(options(waits), async () => {
      throw new WebProviderHttpError("vendor", 429, "", 3600);
    });
    expect(waits).toEqual([]);
    expect(result).toMatchObject({ ok: false, attempts: 1 });
    if (!result.ok) expect(result.message).toContain("is rate limiting (HTTP 429) (it asked to wait 3600 s)");
  });

  it("does not retry 4xx; 401 names the env var", async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await runProviderCall(options(waits), async () => {
      calls++;
      throw new WebProviderHttpError("vendor", 401, "bad key");
    });
    expect(calls).toBe(1);
    if (!result.ok) expect(result.message).toContain("the key is missing or wrong. Set the VENDOR_API_KEY environment variable");
  });

  it("turns a hung call into a timeout message even if the provider ignores the signal", async () => {
    const started = Date.now();
    const result = await runProviderCall(options([], { timeoutMs: 200 }), () => new Promise(() => {}));
    // The provider never settles; anything that returns at all did so on the timeout (the bound leaves room for a loaded machine).
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result).toMatchObject({ ok: false });
    if (!result.ok)
      expect(result.message).toBe(
        "web_search failed: vendor did not answer within 0.2 s (timeout_seconds). The site or service may be slow or down; try again or use another source.",
      );
  });

  it("lets the run's own cancellation propagate instead of reporting it", async () => {
    const controller = new AbortController();
    const pending = runProviderCall(options([], { signal: controller.signal }), () => new Promise(() => {}));
    controller.abort(new Error("run cancelled"));
    await expect(pending).rejects.toThrow("run cancelled");
  });

  it("gives providers a vendor fetch that sends X-Trace-Id and the call's signal", async () => {
    let seen: { trace: string | null; signal: boolean } | undefined;
    const baseFetch = (async (_input: unknown, init?: RequestInit) => {
      seen = { trace: new Headers(init?.headers).get("x-trace-id"), signal: init?.signal instanceof AbortSignal };
      return new Response("{}");
    }) as typeof fetch;
    await runProviderCall(options([], { baseFetch }), async (ctx) => (await ctx.vendorFetch!("http://127.0.0.1:1/api")).text());
    expect(seen).toEqual({ trace: "t-1", signal: true });
  });
});

describe("parseRetryAfter", () => {
  it("reads delta-seconds and HTTP dates", () => {
    expect(parseRetryAfter("7")).toBe(7);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:10 GMT", Date.parse("Wed, 21 Oct 2015 07:28:00 GMT"))).toBe(10);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe("runProviderCall: broken connections", () => {
  async function resettingServer(resets: number) {
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      if (requests <= resets) {
        req.socket.destroy();
        return;
      }
      res.end("fine");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    return { url, requests: () => requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it("retries a connection the server reset, and returns the answer that follows", async () => {
    const server = await resettingServer(1);
    const waits: number[] = [];
    try {
      const result = await runProviderCall(options(waits), async (ctx) => (await ctx.fetch(server.url)).text());
      expect(result).toEqual({ ok: true, value: "fine", attempts: 2 });
      expect(server.requests()).toBe(2);
      expect(waits).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it("reports a connection that keeps breaking after the last try, naming the error code", async () => {
    const server = await resettingServer(100);
    const waits: number[] = [];
    try {
      const result = await runProviderCall(options(waits), async (ctx) => (await ctx.fetch(server.url)).text());
      expect(result).toMatchObject({ ok: false, attempts: 3 });
      if (!result.ok)
        expect(result.message).toMatch(
          /^web_search failed: the connection to vendor broke \((ECONNRESET|UND_ERR_SOCKET)\) after 3 tries\./,
        );
    } finally {
      await server.close();
    }
  });

  it("does not retry a host that does not exist", async () => {
    const waits: number[] = [];
    const missing = Object.assign(new Error("getaddrinfo ENOTFOUND nowhere.invalid"), { code: "ENOTFOUND" });
    const result = await runProviderCall(options(waits), async () => {
      throw new TypeError("fetch failed", { cause: missing });
    });
    expect(result).toMatchObject({ ok: false, attempts: 1 });
    expect(waits).toEqual([]);
  });
});
