import type { Logger, Sandbox, StateField } from "@antler/kernel";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { ReducedValue } from "@langchain/langgraph";
import { z } from "zod";

/** One refused egress attempt, as a restricted sandbox's sidecar records it. */
export interface SandboxEgressDenial {
  id: number;
  host: string;
  port: number;
  method: string;
  kind: string;
  reason: string;
}

/**
 * What a sandbox with an egress policy offers (`sandbox.egress`; the AIO provider's restricted mode). Each
 * denial is surfaced at most once: claimed (the oldest unsurfaced first) or drained.
 */
export interface SandboxEgress {
  claimOldestDenial(): Promise<SandboxEgressDenial | undefined>;
  drainDenials(): Promise<SandboxEgressDenial[]>;
  /** Adds the destination to the sandbox's policy. */
  approve(host: string, port: number): Promise<unknown>;
}

export function egressOf(sandbox: Sandbox): SandboxEgress | undefined {
  const egress = (sandbox as Sandbox & { egress?: unknown }).egress as Partial<SandboxEgress> | undefined;
  return egress && typeof egress.claimOldestDenial === "function" && typeof egress.drainDenials === "function"
    ? (egress as SandboxEgress)
    : undefined;
}

export const EGRESS_REQUEST_KEY = "egress_request";

const egressRequestSchema = z
  .object({
    status: z.enum(["pending", "asked", "approved", "denied"]),
    host: z.string(),
    port: z.number(),
    reason: z.string(),
    denial_id: z.number(),
    tool_call_id: z.string(),
  })
  .nullable();

export type EgressRequest = NonNullable<z.output<typeof egressRequestSchema>>;

/** The thread's one open egress question: last write wins. */
export const egressRequestField: StateField = new ReducedValue(egressRequestSchema.optional(), {
  inputSchema: egressRequestSchema.optional(),
  reducer: (_current: EgressRequest | null | undefined, next: EgressRequest | null | undefined) => next ?? null,
}) as StateField;

const APPROVE = /^\s*(allow|yes|approve|ok)\b/i;

/** The clarification shown for a denial: the same shape `ask_clarification` produces, a choice of Allow or Deny. */
export function denialClarification(request: EgressRequest): [AIMessage, ToolMessage] {
  const id = `egress-${request.denial_id}-${request.tool_call_id}`.slice(0, 64);
  const question = `The sandbox tried to reach ${request.host}:${request.port}, which its network policy does not allow. Allow it?`;
  const context = `${request.reason}. Allowing adds ${request.host}:${request.port} to this sandbox's policy; nothing is re-run.`;
  const args = { question, clarification_type: "risk_confirmation", context, options: ["Allow", "Deny"] };
  return [
    new AIMessage({ content: "", tool_calls: [{ id, name: "ask_clarification", args, type: "tool_call" }] }),
    new ToolMessage({
      content: `${question}\n${context}\n\n1. Allow\n2. Deny`,
      name: "ask_clarification",
      tool_call_id: id,
      status: "success",
      artifact: {
        human_input: { version: 1, kind: "choice", question, clarification_type: "risk_confirmation", context, options: ["Allow", "Deny"] },
      },
    }),
  ];
}

/** Whether the user's reply approves the asked request. */
export function isApproval(reply: string): boolean {
  return APPROVE.test(reply);
}

/** Runs that cannot ask (subagents, non-interactive runs) take every denial and leave the policy as it is. */
export async function drainAndDeny(egress: SandboxEgress, logger: Logger | undefined, why: string): Promise<number> {
  const drained = await egress.drainDenials().catch((err: unknown) => {
    logger?.warn({ err }, "could not drain the sandbox's egress denials");
    return [] as SandboxEgressDenial[];
  });
  for (const d of drained) logger?.info({ host: d.host, port: d.port, reason: d.reason }, `egress denial kept (${why})`);
  return drained.length;
}
