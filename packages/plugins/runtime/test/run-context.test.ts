import { TRACE_METADATA_KEY } from "@antler/kernel";
import { describe, expect, it } from "vitest";
import { INTERNAL_PRINCIPAL, sanitizeRunContext } from "../src/index.js";

describe("server-owned runtime context", () => {
  const caller = { non_interactive: true, sandbox_id: "someone-elses", [TRACE_METADATA_KEY]: "forged", locale: "de", user_id: "admin" };

  it("drops server-owned keys sent by an ordinary caller and stamps the server's trace id", () => {
    const { context, dropped } = sanitizeRunContext(caller, { principal: { kind: "user", userId: "alice" }, traceId: "server-trace" });
    expect(context).toEqual({ locale: "de", [TRACE_METADATA_KEY]: "server-trace", user_id: "alice" });
    expect(dropped.sort()).toEqual([TRACE_METADATA_KEY, "non_interactive", "sandbox_id", "user_id"].sort());
  });

  it("accepts server-owned keys from the internal principal, except the trace id, which is always replaced", () => {
    const { context, dropped } = sanitizeRunContext(caller, { principal: INTERNAL_PRINCIPAL, traceId: "server-trace" });
    expect(context).toMatchObject({ non_interactive: true, sandbox_id: "someone-elses", [TRACE_METADATA_KEY]: "server-trace" });
    expect(dropped).toEqual([TRACE_METADATA_KEY]);
  });

  it("drops a user_role or is_internal an ordinary caller sends, and marks the internal principal's runs is_internal", () => {
    const forged = { user_role: "admin", is_internal: true, locale: "de" };
    const user = sanitizeRunContext(forged, { principal: { kind: "user", userId: "alice", role: "user" }, traceId: "t" });
    expect(user.context).toEqual({ locale: "de", [TRACE_METADATA_KEY]: "t", user_id: "alice" });
    expect(user.dropped.sort()).toEqual(["is_internal", "user_role"]);
    const internal = sanitizeRunContext({ user_role: "ops" }, { principal: INTERNAL_PRINCIPAL, traceId: "t" });
    expect(internal.context).toMatchObject({ user_role: "ops", is_internal: true });
  });
});
