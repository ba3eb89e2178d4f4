import { silentLogger } from "@antler/kernel";
import { loadAuthoring } from "@antler/kernel/authoring";
import { ToolMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GuardrailDecision, GuardrailProvider, GuardrailRequest } from "../contract.js";
import { guardrailMiddleware } from "../middleware.js";

/** What a provider under test brings: the provider, a request it allows and one it denies, and optionally a failing copy. */
export interface GuardrailConformanceSubject {
  readonly provider: GuardrailProvider;
  /** Fields of a request the provider allows; the kit fills the rest. */
  readonly allowed: Partial<GuardrailRequest>;
  /** Fields of a request the provider denies. */
  readonly denied: Partial<GuardrailRequest>;
  /** The same kind of provider set up to fail (its backend down, timing out): it must throw, never allow or deny. */
  readonly failing?: GuardrailProvider | undefined;
  /** Releases what the subject started (servers, clients). */
  close?(): Promise<void> | void;
}

export interface GuardrailConformanceOptions {
  /** Shown in the suite's name. */
  readonly name: string;
  /** Builds the subject once for the suite (start loopback servers here). */
  subject(): Promise<GuardrailConformanceSubject> | GuardrailConformanceSubject;
}

const CODE = /^[a-z][a-z0-9_.:-]{0,63}$/;

/** A complete request: the kit's defaults under the subject's fields, deeply frozen so a provider that mutates it fails. */
export function conformanceRequest(fields: Partial<GuardrailRequest>): GuardrailRequest {
  const request: GuardrailRequest = {
    tool_name: "web_search",
    tool_input: Object.freeze({ query: "conformance" }),
    user_id: "conformance-user",
    user_role: "user",
    thread_id: "conformance-thread",
    run_id: "conformance-run",
    tool_call_id: "call-conformance-1",
    agent: null,
    is_subagent: false,
    is_internal: false,
    trace_id: "conformance-trace",
    ...fields,
  };
  return Object.freeze({ ...request, tool_input: Object.freeze({ ...request.tool_input }) });
}

function assertDecisionShape(decision: GuardrailDecision): void {
  expect(typeof decision.allow).toBe("boolean");
  expect(Array.isArray(decision.reasons)).toBe(true);
  for (const reason of decision.reasons) {
    expect(reason.code).toMatch(CODE);
    expect(typeof reason.message).toBe("string");
    expect(reason.message.trim()).not.toBe("");
  }
  if (decision.policy_id !== undefined) expect(typeof decision.policy_id).toBe("string");
  // Decisions travel in events and logs: plain JSON, nothing lost.
  expect(JSON.parse(JSON.stringify(decision))).toEqual(decision);
}

/** Calls the Guardrail middleware as LangChain would, with a handler that records whether the tool ran. */
async function throughMiddleware(provider: GuardrailProvider, request: GuardrailRequest, failClosed: boolean) {
  let ran = 0;
  const middleware = guardrailMiddleware({
    providers: [{ provider, failClosed }],
    subagent: false,
    defaultRole: null,
    logger: silentLogger(),
  });
  const wrap = middleware.wrapToolCall as NonNullable<typeof middleware.wrapToolCall>;
  const result = await wrap(
    {
      toolCall: { name: request.tool_name, args: { ...request.tool_input }, id: request.tool_call_id },
      tool: undefined,
      state: { messages: [] },
      runtime: {
        context: {
          user_id: request.user_id,
          user_role: request.user_role,
          thread_id: request.thread_id,
          antler_trace_id: request.trace_id,
        },
      },
    } as never,
    async () => {
      ran += 1;
      return new ToolMessage({ content: "ran", tool_call_id: request.tool_call_id, name: request.tool_name });
    },
  );
  return { ran, message: result as ToolMessage };
}

/**
 * The shared suite every guardrail provider passes (the built-in `allowlist` and `http` run it; a third-party
 * provider calls it once from a vitest file): decision shape and codes, no mutation of the request, a denial
 * that the Guardrail middleware turns into a refusal naming every reason, and failures that throw so
 * `fail_closed` can decide.
 */
export function runGuardrailProviderConformance(options: GuardrailConformanceOptions): void {
  describe(`guardrail provider conformance: ${options.name}`, () => {
    let subject: GuardrailConformanceSubject;
    beforeAll(async () => {
      // The middleware's refusals are LangChain messages, and no kernel runs here to load LangChain for them.
      await loadAuthoring();
      subject = await options.subject();
    });
    afterAll(async () => {
      await subject?.close?.();
    });

    it("has a name and allows the allowed request with a well-formed decision", async () => {
      expect(typeof subject.provider.name).toBe("string");
      expect(subject.provider.name).not.toBe("");
      const decision = await subject.provider.evaluate(conformanceRequest(subject.allowed), {});
      assertDecisionShape(decision);
      expect(decision.allow).toBe(true);
    });

    it("denies the denied request with at least one coded reason, without mutating the request", async () => {
      const decision = await subject.provider.evaluate(conformanceRequest(subject.denied), {});
      assertDecisionShape(decision);
      expect(decision.allow).toBe(false);
      expect(decision.reasons.length).toBeGreaterThan(0);
    });

    it("gives the same answer to the same request (no hidden per-call state)", async () => {
      const first = await subject.provider.evaluate(conformanceRequest(subject.denied), {});
      const second = await subject.provider.evaluate(conformanceRequest(subject.denied), {});
      expect(second).toEqual(first);
    });

    it("through the Guardrail middleware: a denial is an error tool message with every reason, and the tool never runs", async () => {
      const request = conformanceRequest(subject.denied);
      const decision = await subject.provider.evaluate(request, {});
      const { ran, message } = await throughMiddleware(subject.provider, request, true);
      expect(ran).toBe(0);
      expect(message.status).toBe("error");
      expect(message.tool_call_id).toBe(request.tool_call_id);
      for (const reason of decision.reasons) expect(String(message.content)).toContain(`- ${reason.code}: ${reason.message}`);
      const allowed = await throughMiddleware(subject.provider, conformanceRequest(subject.allowed), true);
      expect(allowed.ran).toBe(1);
    });

    it("a failing provider throws rather than deciding, so fail_closed decides", async () => {
      if (!subject.failing) return;
      const failing = subject.failing;
      await expect(Promise.resolve().then(() => failing.evaluate(conformanceRequest(subject.allowed), {}))).rejects.toBeInstanceOf(Error);
      const closed = await throughMiddleware(failing, conformanceRequest(subject.allowed), true);
      expect(closed.ran).toBe(0);
      expect(String(closed.message.content)).toContain("- provider_error: ");
      const open = await throughMiddleware(failing, conformanceRequest(subject.allowed), false);
      expect(open.ran).toBe(1);
    });
  });
}
