import { stampTraceHeaders } from "@antler/kernel";
import { z } from "zod";
import type { GuardrailDecision, GuardrailProviderFactory } from "../contract.js";

export const httpProviderConfigSchema = z.strictObject({
  /** The policy service's endpoint; it gets the GuardrailRequest as a JSON POST body. */
  url: z.url({ protocol: /^https?$/, error: "url must be an http:// or https:// URL of the policy service" }),
  /** How long to wait for the whole answer; past it the call is a provider error (`fail_closed` decides). */
  timeout_ms: z.number().int().min(1).max(60_000).default(2000),
  /** Extra request headers, e.g. `{ Authorization: "Bearer ${POLICY_TOKEN}" }`. */
  headers: z.record(z.string(), z.string()).default({}),
});

const reasonSchema = z.object({ code: z.string().min(1), message: z.string() });
/** What the policy service answers with (HTTP 2xx, JSON). */
export const httpDecisionSchema = z.object({
  allow: z.boolean(),
  reasons: z.array(reasonSchema).default([]),
  policy_id: z.string().min(1).optional(),
  /** With allow false: ask a person (an `approval:` rule with `guardrail: ask`) instead of denying. */
  ask: z.boolean().optional(),
});

/** A policy service that did not give a usable answer. */
export class GuardrailProviderError extends Error {
  override readonly name = "GuardrailProviderError";
}

/**
 * `use: http`: POSTs each GuardrailRequest to a policy service and uses its `{ allow, reasons, policy_id }`.
 * A timeout, a non-2xx status, or a body that is not such JSON is a provider error.
 */
export const httpProviderFactory: GuardrailProviderFactory<typeof httpProviderConfigSchema> = {
  use: "http",
  configSchema: httpProviderConfigSchema,
  create(config) {
    const url = config.url;
    return {
      name: "http",
      async evaluate(request, options): Promise<GuardrailDecision> {
        const headers = new Headers(config.headers);
        headers.set("content-type", "application/json");
        headers.set("accept", "application/json");
        if (request.trace_id) stampTraceHeaders(headers, request.trace_id);
        const timeout = AbortSignal.timeout(config.timeout_ms);
        const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
        let response: Response;
        let text: string;
        try {
          response = await fetch(url, { method: "POST", headers, body: JSON.stringify(request), signal });
          text = await response.text();
        } catch (err) {
          if (timeout.aborted)
            throw new GuardrailProviderError(`the policy service at ${url} did not answer within ${config.timeout_ms} ms`);
          throw new GuardrailProviderError(`the policy service at ${url} could not be reached: ${(err as Error).message}`);
        }
        if (!response.ok) {
          throw new GuardrailProviderError(
            `the policy service at ${url} answered HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ""}`,
          );
        }
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          throw new GuardrailProviderError(`the policy service at ${url} answered with a body that is not JSON: ${text.slice(0, 200)}`);
        }
        const parsed = httpDecisionSchema.safeParse(json);
        if (!parsed.success) {
          throw new GuardrailProviderError(
            `the policy service at ${url} answered without a valid decision (${parsed.error.issues[0]?.message ?? "invalid"}); expected { allow: boolean, reasons?: [{ code, message }], policy_id? }`,
          );
        }
        const decision = parsed.data;
        if (!decision.allow && decision.reasons.length === 0) {
          return { ...decision, reasons: [{ code: "policy_denied", message: "the policy service denied the call without a reason." }] };
        }
        return decision;
      },
    };
  },
};
