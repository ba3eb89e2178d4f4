import { DEFAULT_USER_ID, emitCustomEvent, type Logger, type MiddlewareSpec, resolveTraceId, TRACE_METADATA_KEY } from "@antler/kernel";
import { refuseToolCall } from "@antler/kernel/authoring";
import { getConfig } from "@langchain/langgraph";
import {
  GUARDRAIL_DENIED_EVENT,
  type GuardrailDecision,
  type GuardrailDeniedEvent,
  type GuardrailProvider,
  type GuardrailRequest,
} from "./contract.js";

/** One provider in the order it is asked, with what its failure means. */
export interface AskedProvider {
  readonly provider: GuardrailProvider;
  /** A failing provider denies (`provider_error`) when true, and is skipped with a warning when false. */
  readonly failClosed: boolean;
}

export interface GuardrailMiddlewareOptions {
  readonly providers: readonly AskedProvider[];
  /** This agent is a subagent's (the `task` tool's). */
  readonly subagent: boolean;
  /** The role a call without `user_role` in its context acts with; null when authorization is off. */
  readonly defaultRole: string | null;
  /** Told each tool name LangChain bound for the call, so RBAC can tell a pipeline tool from a forged name. */
  readonly noteBoundTool?: ((name: string) => void) | undefined;
  readonly logger: Logger;
}

/** State key where the Approval middleware lists the calls of the turn a person approved (or edited). */
export const APPROVED_TOOL_CALLS_KEY = "approved_tool_calls";

/** What a provider is asked about one call, from the run's context. */
export function guardrailRequestFor(
  toolCall: { name: string; id?: string | undefined },
  args: unknown,
  context: Record<string, unknown>,
  options: { subagent: boolean; defaultRole: string | null; traceId: string },
): GuardrailRequest {
  return {
    tool_name: toolCall.name,
    tool_input: args && typeof args === "object" ? (args as Record<string, unknown>) : {},
    user_id: str(context.user_id) ?? DEFAULT_USER_ID,
    user_role: str(context.user_role) ?? options.defaultRole,
    thread_id: str(context.thread_id),
    run_id: runIdOfCall(),
    tool_call_id: toolCall.id ?? "",
    agent: str(context.agent_name),
    is_subagent: options.subagent,
    is_internal: context.is_internal === true,
    trace_id: options.traceId,
  };
}

/** `additional_kwargs` key of a refusal's ToolMessage: `{ policy_id, reasons }`. */
export const GUARDRAIL_REFUSAL_KEY = "antler_guardrail";

const str = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

function runIdOfCall(): string | null {
  try {
    return str(getConfig()?.metadata?.run_id);
  } catch {
    return null;
  }
}

/** Why the call was refused, as the model reads it after the kernel's "Refused: <tool> was not run:": each reason as `code: message`. */
export function refusalReason(decision: GuardrailDecision): string {
  const policy = decision.policy_id ? ` by policy "${decision.policy_id}"` : "";
  const reasons = decision.reasons.map((r) => `- ${r.code}: ${r.message}`).join("\n");
  return `denied${policy}.\n${reasons}\nDo not retry it; continue with the tools you are allowed to use, or tell the user what you could not do.`;
}

/**
 * The Guardrail middleware: before each tool call, asks every provider in order (RBAC first when authorization is
 * on); the first denial becomes an error ToolMessage with the reasons plus a `guardrail_denied` event, and the
 * tool never runs. It sits after DanglingToolCall and before ToolErrorHandling, so a refusal is a tool result of
 * its own, never an exception reported as a failed tool.
 */
export function guardrailMiddleware(options: GuardrailMiddlewareOptions): MiddlewareSpec {
  const { providers, subagent, defaultRole, noteBoundTool, logger } = options;
  return {
    name: "guardrail",
    async wrapToolCall(request, handler) {
      const context = (request.runtime?.context ?? {}) as Record<string, unknown>;
      const toolName = request.toolCall.name;
      if (request.tool) noteBoundTool?.(toolName);
      const args = request.toolCall.args;
      // The run's id when usable, else the ambient one, else a fresh one: a policy service, the denial event and the
      // log line always get an id, and never an unvalidated one (it goes into an HTTP header).
      const traceId = resolveTraceId(context[TRACE_METADATA_KEY]);
      const guardRequest = guardrailRequestFor(request.toolCall, args, context, { subagent, defaultRole, traceId });
      // Calls a person approved after a provider asked for it (`ask`, the Approval middleware's record of the turn).
      const approved = (request.state as { [APPROVED_TOOL_CALLS_KEY]?: unknown } | undefined)?.[APPROVED_TOOL_CALLS_KEY];
      const personApproved = Array.isArray(approved) && approved.includes(guardRequest.tool_call_id);
      const signal = (request.runtime as { signal?: AbortSignal } | undefined)?.signal;
      for (const { provider, failClosed } of providers) {
        let decision: GuardrailDecision;
        try {
          decision = await provider.evaluate(guardRequest, { signal });
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          if (!failClosed) {
            logger.warn(
              { err, trace_id: traceId, tool: toolName, provider: provider.name },
              `guardrail provider "${provider.name}" failed; the call is allowed because fail_closed is false`,
            );
            continue;
          }
          decision = {
            allow: false,
            policy_id: provider.name,
            reasons: [
              {
                code: "provider_error",
                message: `the guardrail provider "${provider.name}" failed (${message}), and fail_closed denies on failure.`,
              },
            ],
          };
        }
        if (decision.allow) continue;
        if (decision.ask === true && personApproved) continue;
        const reasons =
          decision.reasons.length > 0
            ? decision.reasons
            : [{ code: "policy_denied", message: "the policy denied the call without a reason." }];
        const denial = { ...decision, reasons };
        const policyId = denial.policy_id ?? provider.name;
        logger.info(
          {
            trace_id: traceId,
            tool: toolName,
            tool_call_id: guardRequest.tool_call_id,
            policy_id: policyId,
            reasons,
            user_role: guardRequest.user_role,
          },
          `guardrail denied "${toolName}"`,
        );
        const event: GuardrailDeniedEvent = {
          type: GUARDRAIL_DENIED_EVENT,
          tool: toolName,
          tool_call_id: guardRequest.tool_call_id,
          reasons,
          policy_id: policyId,
          trace_id: traceId,
          run_id: guardRequest.run_id,
        };
        await emitCustomEvent({ ...event }).catch(() => undefined);
        const refusal = refuseToolCall(request, refusalReason({ ...denial, policy_id: policyId }));
        refusal.additional_kwargs[GUARDRAIL_REFUSAL_KEY] = { policy_id: policyId, reasons };
        return refusal;
      }
      return handler(request);
    },
  };
}
