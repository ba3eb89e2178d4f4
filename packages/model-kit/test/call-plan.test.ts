import { AntlerError, ErrorCodes } from "@antler/kernel";
import { describe, expect, it } from "vitest";
import { classifyFailure, inProcessRateStore, ModelLimiter, modelCallCostUsd, parseRetryAfter } from "../src/index.js";

describe("parseRetryAfter", () => {
  it("reads delta-seconds, fractions included", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    expect(parseRetryAfter(" 0.5 ")).toBe(500);
  });

  it("reads an HTTP date as the time left until it, and a date past as 0", () => {
    const now = Date.parse("Wed, 21 Oct 2026 07:28:00 GMT");
    expect(parseRetryAfter("Wed, 21 Oct 2026 07:28:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Wed, 21 Oct 2026 07:27:00 GMT", now)).toBe(0);
  });

  it("ignores a value that is neither", () => {
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe("classifyFailure", () => {
  const httpError = (status: number, headers: Record<string, string> = {}) =>
    Object.assign(new Error(`HTTP ${status}`), { status, headers });

  it("treats 429 and 5xx as worth another attempt, with the Retry-After they carry (Headers or a plain record)", () => {
    expect(classifyFailure(httpError(429, { "retry-after": "2" }))).toEqual({ reason: "rate_limited", status: 429, retryAfterMs: 2000 });
    const withHeaders = Object.assign(new Error("x"), { status: 503, headers: new Headers({ "Retry-After": "1" }) });
    expect(classifyFailure(withHeaders)).toEqual({ reason: "server_error", status: 503, retryAfterMs: 1000 });
  });

  it("looks through MODEL_CALL_FAILED to the provider error it wraps", () => {
    const wrapped = new AntlerError(ErrorCodes.MODEL_CALL_FAILED, "failed", { cause: httpError(502), details: { status: 502 } });
    expect(classifyFailure(wrapped)).toMatchObject({ reason: "server_error", status: 502 });
  });

  it("treats timeouts and unreachable endpoints as worth another attempt, and 400/401 as final", () => {
    expect(classifyFailure(Object.assign(new Error("Request timed out."), { name: "TimeoutError" }))?.reason).toBe("timeout");
    expect(classifyFailure(Object.assign(new Error("Connection error."), { name: "APIConnectionError" }))?.reason).toBe("unreachable");
    expect(classifyFailure(httpError(400))).toBeUndefined();
    expect(classifyFailure(httpError(401))).toBeUndefined();
  });
});

describe("modelCallCostUsd", () => {
  it("prices cached input and reasoning tokens at their own rates, the rest at input and output", () => {
    const pricing = { input: 2, output: 8, cached_input: 0.5, reasoning: 10 };
    const usage = {
      input_tokens: 1_000_000,
      output_tokens: 500_000,
      input_token_details: { cache_read: 400_000 },
      output_token_details: { reasoning: 100_000 },
    };
    // 600k × $2 + 400k × $0.5 + 400k × $8 + 100k × $10 (per million)
    expect(modelCallCostUsd(pricing, usage)).toBeCloseTo(1.2 + 0.2 + 3.2 + 1.0, 10);
  });

  it("defaults cached input to the input price and reasoning to the output price", () => {
    const usage = {
      input_tokens: 1000,
      output_tokens: 1000,
      input_token_details: { cache_read: 1000 },
      output_token_details: { reasoning: 1000 },
    };
    expect(modelCallCostUsd({ input: 3, output: 15 }, usage)).toBeCloseTo(0.003 + 0.015, 10);
  });
});

describe("ModelLimiter", () => {
  it("fails as MODEL_RATE_LIMITED when no concurrency slot frees within the queue timeout, and admits the next once one is released", async () => {
    const limiter = new ModelLimiter(() => inProcessRateStore());
    const limits = { maxConcurrency: 1, requestsPerMinute: undefined, queueTimeoutMs: 0 };
    const first = await limiter.acquire("m", limits);
    const err = await limiter.acquire("m", limits).catch((e: unknown) => e);
    expect((err as AntlerError).code).toBe(ErrorCodes.MODEL_RATE_LIMITED);
    first.release();
    const second = await limiter.acquire("m", limits);
    second.release();
  });

  it("counts requests per minute per model in a sliding window", async () => {
    let now = 0;
    const store = inProcessRateStore(() => now);
    expect(await store.takeRequest("m", 2)).toBe(0);
    now = 10_000;
    expect(await store.takeRequest("m", 2)).toBe(0);
    expect(await store.takeRequest("m", 2)).toBe(50_000);
    expect(await store.takeRequest("other", 2)).toBe(0);
    now = 60_001;
    expect(await store.takeRequest("m", 2)).toBe(0);
  });
});
