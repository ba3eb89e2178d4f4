import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it, vi } from "vitest";
import {
  ensureTraceContext,
  ensureTraceId,
  generateTraceId,
  getCurrentTraceId,
  normalizeTraceId,
  outsideTraceContext,
  requestTraceContext,
  resolveTraceId,
} from "../src/index.js";

describe("trace ids", () => {
  it("keeps a valid header id as it is", () => {
    expect(requestTraceContext("abc-123 req", (id) => id)).toBe("abc-123 req");
    expect(normalizeTraceId("x".repeat(512))).toBe("x".repeat(512));
  });

  it.each([
    ["control characters", "abc\u0001def"],
    ["a newline (header injection)", "abc\r\nSet-Cookie: x"],
    ["600 characters", "a".repeat(600)],
    ["non-ASCII", "trace-é"],
    ["an empty string", ""],
    ["only spaces", "   "],
    ["a number", 42],
  ])("replaces an id with %s by a fresh one", (_label, bad) => {
    expect(normalizeTraceId(bad)).toBeNull();
    const id = requestTraceContext(bad, (traceId) => traceId);
    expect(id).not.toBe(bad);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
  });

  it("mints distinct 32-hex ids", () => {
    const ids = new Set(Array.from({ length: 1000 }, generateTraceId));
    expect(ids.size).toBe(1000);
  });
});

describe("trace scopes", () => {
  it("has no ambient id outside a scope, and ensureTraceId does not bind one", () => {
    expect(getCurrentTraceId()).toBeNull();
    const fresh = ensureTraceId();
    expect(fresh).toMatch(/^[0-9a-f]{32}$/);
    expect(getCurrentTraceId()).toBeNull();
  });

  it("a request scope never inherits the surrounding id, even when the header is unusable", () => {
    ensureTraceContext("outer-id", () => {
      expect(requestTraceContext(undefined, (id) => id)).not.toBe("outer-id");
      expect(requestTraceContext("bad\u0000", (id) => id)).not.toBe("outer-id");
      expect(requestTraceContext((id: string) => id)).not.toBe("outer-id");
    });
  });

  it("ensureTraceContext reuses the surrounding scope even when given another id", () => {
    ensureTraceContext("outer-id", () => {
      expect(ensureTraceContext((id) => id)).toBe("outer-id");
      expect(ensureTraceContext(null, (id) => id)).toBe("outer-id");
      expect(ensureTraceContext("inner-id", (id) => id)).toBe("outer-id");
      expect(ensureTraceContext("bad\u0007", (id) => id)).toBe("outer-id");
    });
  });

  it("ensureTraceContext outside any scope starts one with the given id, else a fresh one", () => {
    expect(ensureTraceContext("given-id", (id) => [id, getCurrentTraceId()])).toEqual(["given-id", "given-id"]);
    expect(ensureTraceContext("bad\u0007", (id) => id)).toMatch(/^[0-9a-f]{32}$/);
    expect(ensureTraceContext((id) => id)).toMatch(/^[0-9a-f]{32}$/);
  });

  it("a scheduled-style binding layered inside a request scope stays on the request's trace", () => {
    const seen = requestTraceContext("request-id", () => ensureTraceContext("occurrence-id", () => ensureTraceContext((id) => id)));
    expect(seen).toBe("request-id");
  });

  it("outsideTraceContext runs work with no ambient id, so a loop started there carries no caller's id", async () => {
    const seen = await ensureTraceContext("caller-id", () =>
      outsideTraceContext(async () => {
        const direct = getCurrentTraceId();
        const later = await new Promise<string | null>((resolve) => setTimeout(() => resolve(getCurrentTraceId()), 1));
        const bound = ensureTraceContext("unit-id", (id) => id);
        return [direct, later, bound];
      }),
    );
    expect(seen).toEqual([null, null, "unit-id"]);
  });

  it("resolveTraceId takes the first usable carrier, else the ambient id", () => {
    ensureTraceContext("ambient", () => {
      expect(resolveTraceId(undefined, "bad\n", "carrier-2", "carrier-3")).toBe("carrier-2");
      expect(resolveTraceId(null, 5)).toBe("ambient");
    });
  });

  it("the scope follows async work and ends with it", async () => {
    const seen = await ensureTraceContext("async-id", async () => {
      await sleep(1);
      const inner = await new Promise<string | null>((resolve) => setImmediate(() => resolve(getCurrentTraceId())));
      return [getCurrentTraceId(), inner];
    });
    expect(seen).toEqual(["async-id", "async-id"]);
    expect(getCurrentTraceId()).toBeNull();
  });

  it("1,000 interleaved concurrent scopes never see each other's ids", async () => {
    const mismatches: string[] = [];
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        requestTraceContext(`req-${i}`, async (id) => {
          for (let step = 0; step < 5; step++) {
            // Random small delays interleave the scopes on the event loop.
            await sleep(Math.floor(Math.random() * 3));
            if (getCurrentTraceId() !== id) mismatches.push(`${id} saw ${getCurrentTraceId()}`);
            const nested = await ensureTraceContext(async (inner) => {
              await sleep(0);
              return inner;
            });
            if (nested !== id) mismatches.push(`${id} nested saw ${nested}`);
          }
        }),
      ),
    );
    expect(mismatches).toEqual([]);
  });

  it("a second copy of the module shares the same scope storage", async () => {
    vi.resetModules(); // the next import evaluates trace.ts again: a second copy, as with two installed versions
    const copy = await import("../src/trace.js");
    expect(copy.getCurrentTraceId).not.toBe(getCurrentTraceId);
    ensureTraceContext("shared-id", () => {
      expect(copy.getCurrentTraceId()).toBe("shared-id");
    });
  });
});
