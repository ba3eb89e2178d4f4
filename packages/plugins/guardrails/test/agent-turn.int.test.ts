import { isAntlerError } from "@antler/kernel";
import type { Script } from "@antler/kernel/testing";
import { type CustomEvent, RuntimeErrorCodes } from "@antler/plugin-runtime";
import subagentsPlugin from "@antler/plugin-subagents";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { GUARDRAIL_DENIED_EVENT } from "../src/index.js";
import { callOnce, guardedClient, json, ROLES, startPolicyServer, toolMessages, turn } from "./fixtures.js";

const deniedEvents = (events: Awaited<ReturnType<typeof turn>>) =>
  events.filter((e): e is CustomEvent => e.type === "custom" && (e.data as { type?: string }).type === GUARDRAIL_DENIED_EVENT);
const endOf = (events: Awaited<ReturnType<typeof turn>>) =>
  events.find((e) => e.type === "end")?.data as { trace_id: string; run_id: string };

describe("allowlist guardrail in an agent turn", () => {
  it("refuses a denylisted call with an error tool message listing the reasons, emits guardrail_denied, and never runs the tool", async () => {
    const { client, calls, runs } = await guardedClient({
      script: callOnce("wipe_disk"),
      config: {
        guardrails: { enabled: true, providers: [{ use: "allowlist", config: { denied_tools: ["wipe_disk"], policy_id: "ops" } }] },
      },
    });
    const events = await turn(client, "clean up", { threadId: "t1" });
    expect(runs.wipe_disk).toBe(0);
    // The model's second call sees the refusal as the tool's result.
    const refusal = toolMessages(calls()[1]?.messages ?? [])[0];
    expect(refusal?.status).toBe("error");
    expect(refusal?.name).toBe("wipe_disk");
    const text = String(refusal?.content);
    expect(text).toContain('Refused: wipe_disk was not run: denied by policy "ops".');
    expect(text).toContain("- tool_denylisted: the tool is on the guardrails denylist (denied_tools).");
    expect(text.split("wipe_disk")).toHaveLength(2); // the tool is named once
    // Not ToolErrorHandling's rendering of an exception.
    expect(text).not.toMatch(/failed/i);
    const end = endOf(events);
    const [event] = deniedEvents(events);
    expect(event?.data).toEqual({
      type: GUARDRAIL_DENIED_EVENT,
      tool: "wipe_disk",
      tool_call_id: refusal?.tool_call_id,
      reasons: [{ code: "tool_denylisted", message: "the tool is on the guardrails denylist (denied_tools)." }],
      policy_id: "ops",
      trace_id: end.trace_id,
      run_id: end.run_id,
    });
  });

  it("lets an allowed call run untouched", async () => {
    const { client, runs } = await guardedClient({
      script: callOnce("web_lookup"),
      config: { guardrails: { enabled: true, providers: [{ use: "allowlist", config: { denied_tools: ["wipe_disk"] } }] } },
    });
    const events = await turn(client, "look it up", { threadId: "t1" });
    expect(runs.web_lookup).toBe(1);
    expect(deniedEvents(events)).toHaveLength(0);
  });
});

describe("http guardrail in an agent turn", () => {
  it("fail_closed: a policy service that never answers times out and the call is denied with provider_error", async () => {
    const server = await startPolicyServer(() => {
      // never answers
    });
    const { client, calls, runs } = await guardedClient({
      script: callOnce("web_lookup"),
      config: {
        // Long enough that a loaded machine still delivers the request before the timeout aborts it.
        guardrails: { enabled: true, fail_closed: true, providers: [{ use: "http", config: { url: server.url, timeout_ms: 1000 } }] },
      },
    });
    const events = await turn(client, "look it up", { threadId: "t1" });
    expect(runs.web_lookup).toBe(0);
    const text = String(toolMessages(calls()[1]?.messages ?? [])[0]?.content);
    expect(text).toContain(
      `- provider_error: the guardrail provider "http" failed (the policy service at ${server.url} did not answer within 1000 ms)`,
    );
    expect(deniedEvents(events)[0]?.data).toMatchObject({ policy_id: "http", reasons: [{ code: "provider_error" }] });
    // The service was asked with the run's identity.
    expect(server.requests[0]?.body).toMatchObject({
      tool_name: "web_lookup",
      thread_id: "t1",
      run_id: endOf(events).run_id,
      is_subagent: false,
    });
  });

  it("fail_closed false: the same timeout lets the call run and logs a warning with the trace id", async () => {
    const server = await startPolicyServer(() => {
      // never answers
    });
    const { client, runs, logs } = await guardedClient({
      script: callOnce("web_lookup"),
      config: {
        guardrails: { enabled: true, fail_closed: false, providers: [{ use: "http", config: { url: server.url, timeout_ms: 1000 } }] },
      },
    });
    const events = await turn(client, "look it up", { threadId: "t1" });
    expect(runs.web_lookup).toBe(1);
    expect(deniedEvents(events)).toHaveLength(0);
    const warning = logs.find((l) =>
      String(l.msg).includes('guardrail provider "http" failed; the call is allowed because fail_closed is false'),
    );
    expect(warning?.trace_id).toBe(endOf(events).trace_id);
  });

  it("a policy service's denial reaches the model with its own reasons and policy id", async () => {
    const server = await startPolicyServer((_body, res) =>
      json(res, 200, {
        allow: false,
        reasons: [{ code: "after_hours", message: "writes are frozen until 08:00." }],
        policy_id: "freeze-1",
      }),
    );
    const { client, calls, runs } = await guardedClient({
      script: callOnce("web_lookup"),
      config: { guardrails: { enabled: true, provider: { use: "http", config: { url: server.url } } } },
    });
    await turn(client, "look it up", { threadId: "t1" });
    expect(runs.web_lookup).toBe(0);
    expect(String(toolMessages(calls()[1]?.messages ?? [])[0]?.content)).toContain('denied by policy "freeze-1"');
  });
});

describe("authorization (RBAC)", () => {
  it("a role without the bash group never sees bash, and a forged call to it is refused at execution", async () => {
    const { client, calls, runs } = await guardedClient({ script: callOnce("bash", { q: "rm -rf /" }), config: { authorization: ROLES } });
    const events = await turn(client, "run a shell", { threadId: "t1", userRole: "user", model: "small" });
    // Layer 1: the agent was built without bash (and without file:write), framework tools kept.
    const bound = calls()[0]?.tools ?? [];
    expect(bound).not.toContain("bash");
    expect(bound).not.toContain("wipe_disk");
    expect(bound).toEqual(expect.arrayContaining(["read_notes", "web_lookup", "present_files"]));
    // Layer 2: the scripted model forged the call anyway; it never ran.
    expect(runs.bash).toBe(0);
    const refusal = toolMessages(calls()[1]?.messages ?? [])[0];
    expect(refusal?.status).toBe("error");
    expect(String(refusal?.content)).toContain(
      '- role_forbids_tool_group: role "user" may not use tools of group "bash" (allowed groups: web, file:read).',
    );
    expect(deniedEvents(events)[0]?.data).toMatchObject({ tool: "bash", policy_id: "rbac" });
  });

  it("an admin sees bash and runs it", async () => {
    const { client, calls, runs } = await guardedClient({ script: callOnce("bash"), config: { authorization: ROLES } });
    await turn(client, "run a shell", { threadId: "t1", userRole: "admin", model: "big" });
    expect(calls()[0]?.tools).toContain("bash");
    expect(runs.bash).toBe(1);
  });

  it("a caller cannot raise its role through the run context: user_role there is dropped and default_role applies", async () => {
    const { client, calls, runs } = await guardedClient({ script: callOnce("bash"), config: { authorization: ROLES } });
    await turn(client, "run a shell", { threadId: "t1", context: { user_role: "admin" } });
    expect(calls()[0]?.tools).not.toContain("bash");
    expect(runs.bash).toBe(0);
  });

  it("refuses a model the role may not use with ANTLER_ERR_MODEL_FORBIDDEN before any run is recorded", async () => {
    const { client, calls } = await guardedClient({ script: [{ text: "never" }], config: { authorization: ROLES } });
    const failure = await turn(client, "hi", { threadId: "t1", userRole: "user", model: "big" }).catch((err: unknown) => err);
    expect(isAntlerError(failure, RuntimeErrorCodes.MODEL_FORBIDDEN)).toBe(true);
    expect(String((failure as Error).message)).toContain('role "user" may not use model "big"');
    expect((failure as { hint?: string }).hint).toContain("Models this role may use: small");
    expect(calls()).toHaveLength(0);
    await expect(client.listRuns("t1")).rejects.toThrow(/not found/);
    // An unknown role may use nothing.
    const unknown = await turn(client, "hi", { threadId: "t2", userRole: "intern", model: "small" }).catch((err: unknown) => err);
    expect(isAntlerError(unknown, RuntimeErrorCodes.MODEL_FORBIDDEN)).toBe(true);
    expect(String((unknown as Error).message)).toContain('role "intern" is not configured');
  });

  it("runs RBAC before the configured guardrails: a forged call is refused by rbac, not by the allowlist", async () => {
    const { client, calls } = await guardedClient({
      script: callOnce("bash"),
      config: {
        authorization: ROLES,
        guardrails: { enabled: true, providers: [{ use: "allowlist", config: { denied_tools: ["bash"] } }] },
      },
    });
    await turn(client, "run a shell", { threadId: "t1", userRole: "user", model: "small" });
    expect(String(toolMessages(calls()[1]?.messages ?? [])[0]?.content)).toContain('denied by policy "rbac"');
  });
});

describe("subagents", () => {
  it("a subagent acts with its parent's role: no bash offered, a forged bash refused, and providers see is_subagent", async () => {
    const server = await startPolicyServer((_body, res) => json(res, 200, { allow: true }));
    const script: Script = (messages) => {
      const first = String(messages.find((m) => HumanMessage.isInstance(m))?.content ?? "");
      if (ToolMessage.isInstance(messages.at(-1))) return { text: "done" };
      if (first === "delegate it")
        return {
          toolCalls: [{ name: "task", args: { description: "shell work", prompt: "use the shell", subagent_type: "general-purpose" } }],
        };
      return {
        toolCalls: [
          { name: "web_lookup", args: { q: "x" } },
          { name: "bash", args: { q: "id" } },
        ],
      };
    };
    const { client, calls, runs } = await guardedClient({
      script,
      config: {
        subagents: { enabled: true },
        // A permissive default role: without the parent's role, the subagent would get bash.
        authorization: {
          ...ROLES,
          default_role: "admin",
          roles: { ...ROLES.roles, user: { tool_groups: ["web", "subagent"], models: ["small"] } },
        },
        guardrails: { enabled: true, providers: [{ use: "http", config: { url: server.url } }] },
      },
      plugins: [{ plugin: subagentsPlugin, config: { agents: { "general-purpose": { model: "small" } } } }],
    });
    const events = await turn(client, "delegate it", { threadId: "t1", userRole: "user", model: "small" });
    // The refusal inside the subagent is recorded on the parent run, tagged with the task it happened in.
    expect(deniedEvents(events).map((e) => e.data)).toEqual([
      expect.objectContaining({ tool: "bash", subagent: expect.objectContaining({ subagent_type: "general-purpose" }) }),
    ]);
    const subCall = calls().find((c) =>
      c.messages.some((m) => HumanMessage.isInstance(m) && String(m.content).startsWith("use the shell")),
    );
    expect(subCall?.tools).toContain("web_lookup");
    expect(subCall?.tools).not.toContain("bash");
    expect(runs.web_lookup).toBe(1);
    expect(runs.bash).toBe(0);
    const asked = server.requests.map((r) => r.body);
    expect(asked).toContainEqual(expect.objectContaining({ tool_name: "task", is_subagent: false, user_role: "user" }));
    expect(asked).toContainEqual(expect.objectContaining({ tool_name: "web_lookup", is_subagent: true, user_role: "user" }));
    // RBAC refused bash before the policy service was asked.
    expect(asked.some((b) => b.tool_name === "bash")).toBe(false);
  });
});
