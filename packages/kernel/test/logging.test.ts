import { describe, expect, it } from "vitest";
import { ensureTraceContext, REDACTED, requestTraceContext } from "../src/index.js";
import { captureLogs } from "../src/testing/index.js";

const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl";

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

  it("with enhance, a child logger's lines carry the scope's trace_id without the caller passing it", async () => {
    const { logger, lines } = captureLogs({ enhance: true });
    const child = logger.child({ name: "@antler/kernel/token-usage" });
    await ensureTraceContext("run-9", async () => {
      await new Promise((resolve) => setImmediate(resolve));
      child.info({ input_tokens: 3 }, "model usage");
    });
    child.info("after");
    expect(lines.map((l) => [l.msg, l.trace_id])).toEqual([
      ["model usage", "run-9"],
      ["after", "-"],
    ]);
  });

  it("redacts secrets of any shape in logged objects, not only in message strings", () => {
    const { logger, lines } = captureLogs();
    logger.info(
      { api_key: ["k1", "k2"], headers: { Authorization: { scheme: "Bearer", value: "x" } }, note: `jwt ${JWT}`, max_tokens: 5 },
      "calling",
    );
    expect(lines[0]).toMatchObject({
      api_key: REDACTED,
      headers: { Authorization: REDACTED },
      note: `jwt ${REDACTED}`,
      max_tokens: 5,
      msg: "calling",
    });
  });

  it("redacts PEM blocks, name=value secrets in text, suffixed secret keys and numeric secrets, as run records do", () => {
    const { logger, lines } = captureLogs();
    const pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
    logger.info(
      { apiKeyObj: { id: "k-1" }, private_key_pem: "pem-2", card_pin: 4821, key_file: pem },
      "env aws_secret_access_key=AbC/123+xyz",
    );
    const text = JSON.stringify(lines[0]);
    for (const secret of ["k-1", "pem-2", "4821", "b3BlbnNzaC1rZXkt", "AbC/123+xyz"]) expect(text).not.toContain(secret);
    expect(lines[0]).toMatchObject({ apiKeyObj: REDACTED, private_key_pem: REDACTED, card_pin: REDACTED, key_file: REDACTED });
    expect(lines[0]?.msg).toBe(`env aws_secret_access_key=${REDACTED}`);
  });

  it("redacts an error's message and stack, and keeps its type", () => {
    const { logger, lines } = captureLogs();
    logger.error({ err: new TypeError("upstream refused Bearer abcdefgh12345") }, "failed");
    const err = lines[0]?.err as Record<string, unknown>;
    expect(err).toMatchObject({ type: "TypeError", message: `upstream refused Bearer ${REDACTED}` });
    expect(String(err.stack)).not.toContain("abcdefgh12345");
  });

  it("redacts secrets bound on a child logger and in interpolated arguments", () => {
    const { logger, lines } = captureLogs();
    logger.child({ client_secret: { v: "s" } }).info("token %s and %j", `for ${JWT}`, { password: "p" });
    expect(lines[0]?.client_secret).toBe(REDACTED);
    expect(lines[0]?.msg).toBe(`token for ${REDACTED} and {"password":"${REDACTED}"}`);
  });

  it("scrubs credentials from free-text log messages", () => {
    const { logger, lines } = captureLogs();
    logger.warn("cannot reach postgres://app:hunter2@db:5432/x");
    expect(lines[0]?.msg).toBe("cannot reach postgres://app:[REDACTED]@db:5432/x");
  });
});
