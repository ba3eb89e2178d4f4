import { silentLogger } from "@antler/kernel";
import { describe, expect, it } from "vitest";
import {
  allowlistConfigSchema,
  allowlistProviderFactory,
  GuardrailProviderError,
  type GuardrailRequest,
  httpProviderConfigSchema,
  httpProviderFactory,
} from "../src/index.js";
import { json, startPolicyServer } from "./fixtures.js";

const request = (tool: string): GuardrailRequest => ({
  tool_name: tool,
  tool_input: { command: "ls" },
  user_id: "alice",
  user_role: "user",
  thread_id: "t1",
  run_id: "r1",
  tool_call_id: "call-1",
  agent: null,
  is_subagent: false,
  is_internal: false,
  trace_id: "trace-abc",
});

const context = { logger: silentLogger(), where: "guardrails.providers[0].config" };
const allowlist = (config: unknown) => allowlistProviderFactory.create(allowlistConfigSchema.parse(config), context);
const http = (config: unknown) => httpProviderFactory.create(httpProviderConfigSchema.parse(config), context);

describe("allowlist provider", () => {
  it("denies a tool off the allowlist with a coded reason naming what is allowed", async () => {
    const decision = await allowlist({ allowed_tools: ["web_lookup", "read_notes"] }).evaluate(request("bash"), {});
    expect(decision.allow).toBe(false);
    expect(decision.policy_id).toBe("allowlist");
    expect(decision.reasons).toEqual([
      { code: "tool_not_allowlisted", message: "the tool is not on the guardrails allowlist (allowed: web_lookup, read_notes)." },
    ]);
    expect((await allowlist({ allowed_tools: ["web_lookup"] }).evaluate(request("web_lookup"), {})).allow).toBe(true);
  });

  it("denies a denylisted tool even when it is also allowlisted, and allows the rest", async () => {
    const provider = allowlist({ allowed_tools: ["bash", "web_lookup"], denied_tools: ["bash"], policy_id: "ops-2026" });
    const decision = await provider.evaluate(request("bash"), {});
    expect(decision).toMatchObject({ allow: false, policy_id: "ops-2026", reasons: [{ code: "tool_denylisted" }] });
    expect((await provider.evaluate(request("web_lookup"), {})).allow).toBe(true);
  });

  it("refuses a config with neither list", () => {
    expect(() => allowlistConfigSchema.parse({})).toThrow(/needs allowed_tools, denied_tools, or both/);
  });
});

describe("http provider", () => {
  it("POSTs the request as JSON with X-Trace-Id and uses the service's decision", async () => {
    const server = await startPolicyServer((body, res) =>
      json(
        res,
        200,
        body.tool_name === "bash"
          ? { allow: false, reasons: [{ code: "no_shell", message: "shells are off" }], policy_id: "p-7" }
          : { allow: true },
      ),
    );
    const provider = http({ url: server.url, headers: { authorization: "Bearer policy-token" } });
    expect(await provider.evaluate(request("bash"), {})).toEqual({
      allow: false,
      reasons: [{ code: "no_shell", message: "shells are off" }],
      policy_id: "p-7",
    });
    expect((await provider.evaluate(request("web_lookup"), {})).allow).toBe(true);
    const first = server.requests[0];
    expect(first?.body).toEqual(request("bash"));
    expect(first?.headers["x-trace-id"]).toBe("trace-abc");
    expect(first?.headers.authorization).toBe("Bearer policy-token");
    expect(first?.headers["content-type"]).toBe("application/json");
  });

  it("times out on a service that never answers: a provider error naming the URL and the timeout", async () => {
    const server = await startPolicyServer(() => {
      // never answers
    });
    const provider = http({ url: server.url, timeout_ms: 150 });
    const started = Date.now();
    const outcome = Promise.resolve(provider.evaluate(request("bash"), {}));
    await expect(outcome).rejects.toThrow(GuardrailProviderError);
    await expect(outcome).rejects.toThrow(`the policy service at ${server.url} did not answer within 150 ms`);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(server.requests).toHaveLength(1);
  });

  it("treats a non-2xx answer, a body that is not JSON, and JSON without a decision as provider errors", async () => {
    let mode = "500";
    const server = await startPolicyServer((_body, res) => {
      if (mode === "500") json(res, 503, "policy store down");
      else if (mode === "text") json(res, 200, "<html>ok</html>");
      else json(res, 200, { verdict: "yes" });
    });
    const provider = http({ url: server.url });
    await expect(Promise.resolve(provider.evaluate(request("bash"), {}))).rejects.toThrow(/answered HTTP 503: policy store down/);
    mode = "text";
    await expect(Promise.resolve(provider.evaluate(request("bash"), {}))).rejects.toThrow(/a body that is not JSON/);
    mode = "shape";
    await expect(Promise.resolve(provider.evaluate(request("bash"), {}))).rejects.toThrow(/without a valid decision/);
  });

  it("gives a denial without reasons a generic coded reason", async () => {
    const server = await startPolicyServer((_body, res) => json(res, 200, { allow: false }));
    const decision = await http({ url: server.url }).evaluate(request("bash"), {});
    expect(decision.reasons).toEqual([{ code: "policy_denied", message: "the policy service denied the call without a reason." }]);
  });

  it("refuses a URL that is not http(s)", () => {
    expect(() => httpProviderConfigSchema.parse({ url: "file:///etc/passwd" })).toThrow(/http:\/\/ or https:\/\//);
  });
});
