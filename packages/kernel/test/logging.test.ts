import { describe, expect, it } from "vitest";
import { ensureTraceContext, requestTraceContext } from "../src/index.js";
import { captureLogs } from "../src/testing/index.js";

describe("logging", () => {
  it("adds trace_id to every line when logging.enhance.enabled, with '-' before an entry point", () => {
    const { logger, lines } = captureLogs({ enhance: true });
    logger.info("booting");
    requestTraceContext("req-7", () => logger.info("handling"));
    expect(lines.map((l) => [l.msg, l.trace_id])).toEqual([
      ["booting", "-"],
      ["handling", "req-7"],
    ]);
  });

  it("omits trace_id when enhance is off, while the id itself still exists", () => {
    const { logger, lines } = captureLogs({ enhance: false });
    const id = ensureTraceContext("kept", (traceId) => {
      logger.info("quiet");
      return traceId;
    });
    expect(id).toBe("kept");
    expect(lines[0]).not.toHaveProperty("trace_id");
  });

  it("scrubs credentials from free-text log messages", () => {
    const { logger, lines } = captureLogs();
    logger.warn("cannot reach postgres://app:hunter2@db:5432/x");
    expect(lines[0]?.msg).toBe("cannot reach postgres://app:[REDACTED]@db:5432/x");
  });
});
