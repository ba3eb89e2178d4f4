import { emitCustomEvent, type Logger, type MiddlewareSpec, resolveTraceId, TRACE_METADATA_KEY } from "@antler/kernel";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { interrupt } from "@langchain/langgraph";
import { z } from "zod";
import type { ApprovalRuleConfig, ApprovalSection, ArgCondition } from "./approval-config.js";
import type { GuardrailReason } from "./contract.js";
import { APPROVED_TOOL_CALLS_KEY } from "./middleware.js";

/** The `kind` of an approval's interrupt value. */
export const APPROVAL_INTERRUPT_KIND = "approval";
/** Custom event when a non-interactive run's calls got their rule's default at once. */
export const APPROVAL_AUTO_DECIDED_EVENT = "approval_auto_decided";
/** Custom event when a pause's decisions were applied (the run goes on). */
export const APPROVAL_DECIDED_EVENT = "approval_decided";

/** One call waiting for a person, as the pause shows it. */
export interface PendingApprovalCall {
  tool_call_id: string;
  tool: string;
  args: Record<string, unknown>;
  /** The rule that matched (its `name`, else `rule-<index>`). */
  rule: string;
  /** Why approval is needed. */
  reason: string;
}

/** An approval's interrupt value: what the run's `run_paused` event and its record show. */
export interface ApprovalInterrupt {
  kind: typeof APPROVAL_INTERRUPT_KIND;
  calls: PendingApprovalCall[];
  /** When the pause expires (ISO-8601); then `on_timeout` applies. */
  expires_at: string;
  /** The resume value applied at expiry: each call's rule's `on_timeout`. */
  on_timeout: { decisions: Record<string, ApprovalDecision> };
  /** Set when a previous decision could not be applied (it is then asked again). */
  error?: string;
}

const decisionSchema = z.discriminatedUnion("decision", [
  z.strictObject({ decision: z.literal("approve") }),
  z.strictObject({ decision: z.literal("reject"), reason: z.string().max(4000).optional() }),
  z.strictObject({ decision: z.literal("edit"), args: z.record(z.string(), z.unknown()) }),
]);

/** A decision on one call. */
export type ApprovalDecision = z.output<typeof decisionSchema>;

/** What resumes an approval: one decision for every pending call, or decisions by `tool_call_id` (some or all). */
export const approvalResumeSchema = z.union([decisionSchema, z.strictObject({ decisions: z.record(z.string().min(1), decisionSchema) })]);
export type ApprovalResume = z.output<typeof approvalResumeSchema>;

/** Where the middleware looks up a tool's group and argument schema (filled as tools are assembled). */
export interface ApprovalToolLookup {
  groupOf(toolName: string): string | null | undefined;
  schemaOf(toolName: string): unknown;
}

interface CompiledRule {
  name: string;
  tools: ReadonlySet<string>;
  groups: ReadonlySet<string>;
  conditions: Array<{ path: string[]; condition: ArgCondition; pattern?: RegExp }>;
  /** Covers calls a guardrail provider answers with `ask`. */
  ask: boolean;
  reason: string;
  timeoutMs: number;
  onTimeout: "approve" | "reject";
  nonInteractive: "approve" | "reject";
}

export function compileApprovalRules(section: ApprovalSection): CompiledRule[] {
  return section.rules.map((rule: ApprovalRuleConfig, index) => {
    const name = rule.name ?? `rule-${index}`;
    const targets = [...rule.tools, ...rule.groups.map((g) => `group ${g}`), ...(rule.guardrail ? ["guardrail ask"] : [])].join(", ");
    return {
      name,
      tools: new Set(rule.tools),
      groups: new Set(rule.groups),
      conditions: Object.entries(rule.when?.args ?? {}).map(([path, condition]) => ({
        path: path.split("."),
        condition,
        ...(condition.matches !== undefined ? { pattern: new RegExp(condition.matches) } : {}),
      })),
      ask: rule.guardrail === "ask",
      reason: rule.reason ?? `approval rule "${name}" covers ${targets}`,
      timeoutMs: rule.timeout ?? section.timeout,
      onTimeout: rule.on_timeout ?? section.on_timeout,
      nonInteractive: rule.non_interactive ?? section.non_interactive,
    };
  });
}

function valueAt(args: Record<string, unknown>, path: readonly string[]): { found: boolean; value: unknown } {
  let current: unknown = args;
  for (const key of path) {
    if (!current || typeof current !== "object" || !Object.hasOwn(current, key)) return { found: false, value: undefined };
    current = (current as Record<string, unknown>)[key];
  }
  return { found: true, value: current };
}

function conditionHolds(args: Record<string, unknown>, rule: CompiledRule["conditions"][number]): boolean {
  const { found, value } = valueAt(args, rule.path);
  const { condition } = rule;
  if (condition.exists !== undefined && condition.exists !== found) return false;
  if (condition.equals !== undefined && (!found || JSON.stringify(value) !== JSON.stringify(condition.equals))) return false;
  if (condition.in !== undefined && (!found || !condition.in.some((v) => JSON.stringify(v) === JSON.stringify(value)))) return false;
  if (rule.pattern) {
    if (!found) return false;
    const text = typeof value === "string" ? value : JSON.stringify(value);
    if (!rule.pattern.test(text)) return false;
  }
  return true;
}

/** The first rule that covers the call (by name or group, or `asked`: a guardrail provider asked), or undefined. */
export function matchRule(
  rules: readonly CompiledRule[],
  call: Pick<ToolCall, "name" | "args">,
  group: string | null | undefined,
  asked = false,
): CompiledRule | undefined {
  const args = (call.args ?? {}) as Record<string, unknown>;
  return rules.find(
    (rule) =>
      (rule.tools.has(call.name) || rule.groups.has("*") || (typeof group === "string" && rule.groups.has(group)) || (asked && rule.ask)) &&
      rule.conditions.every((c) => conditionHolds(args, c)),
  );
}

/** Checks a decision against the pending calls; returns decisions by call id, or the reason it does not fit. */
export function decideCalls(
  resume: unknown,
  pending: readonly PendingApprovalCall[],
  lookup: Pick<ApprovalToolLookup, "schemaOf">,
): { ok: true; decisions: Map<string, ApprovalDecision> } | { ok: false; message: string; where: string } {
  const parsed = approvalResumeSchema.safeParse(resume);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      where: issue?.path.join(".") || "decision",
      message: `not a decision: ${issue?.message ?? "bad shape"}; send { decision: "approve" | "reject" | "edit", ... } or { decisions: { <tool_call_id>: ... } }`,
    };
  }
  const byId = new Map(pending.map((call) => [call.tool_call_id, call]));
  const decisions = new Map<string, ApprovalDecision>();
  if ("decisions" in parsed.data) {
    for (const [id, decision] of Object.entries(parsed.data.decisions)) {
      if (!byId.has(id)) {
        return {
          ok: false,
          where: `decisions.${id}`,
          message: `no pending call ${JSON.stringify(id)}; pending: ${[...byId.keys()].join(", ")}`,
        };
      }
      decisions.set(id, decision);
    }
  } else {
    if (parsed.data.decision === "edit" && pending.length > 1) {
      return {
        ok: false,
        where: "decision",
        message: `edit names one call, but ${pending.length} are pending; send { decisions: { <tool_call_id>: { decision: "edit", args } } }`,
      };
    }
    for (const call of pending) decisions.set(call.tool_call_id, parsed.data);
  }
  for (const [id, decision] of decisions) {
    if (decision.decision !== "edit") continue;
    const call = byId.get(id) as PendingApprovalCall;
    const schema = lookup.schemaOf(call.tool);
    if (schema && typeof (schema as z.ZodType).safeParse === "function") {
      const checked = (schema as z.ZodType).safeParse(decision.args);
      if (!checked.success) {
        const issue = checked.error.issues[0];
        const path = issue?.path.length ? issue.path.join(".") : "(arguments)";
        return {
          ok: false,
          where: `decisions.${id}.args.${path}`,
          message: `the edited arguments for ${call.tool} do not fit its schema: ${path}: ${issue?.message}`,
        };
      }
      decisions.set(id, { decision: "edit", args: checked.data as Record<string, unknown> });
    }
  }
  return { ok: true, decisions };
}

export interface ApprovalMiddlewareOptions {
  readonly section: ApprovalSection;
  readonly lookup: ApprovalToolLookup;
  readonly logger: Logger;
  readonly now?: () => Date;
  /**
   * A subagent's agent (the `task` tool, batch items): it cannot pause (its graph runs inside a tool call or a batch
   * worker), so its calls get the rule's `non_interactive` decision, like an unattended run's.
   */
  readonly subagent?: boolean;
  /**
   * Asks the guardrail providers about a call (rules with `guardrail: ask`): their reasons when one answers
   * `ask`, else null (allowed, or denied: the Guardrail middleware refuses it when it would run).
   */
  readonly askGuardrails?: ((call: ToolCall, context: Record<string, unknown>) => Promise<readonly GuardrailReason[] | null>) | undefined;
}

const str = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

/**
 * The Approval middleware: after each model call, the turn's tool calls that an `approval:` rule covers pause the
 * run in ONE LangGraph interrupt, before any of the turn's tools runs. It is an `afterModel` hook that may jump,
 * so it has a graph node of its own: resuming re-runs that node, never the model call. A partial decision asks
 * again for the calls left. Then rejected calls get a refusal ToolMessage (the model reads the reason), edited ones
 * their new arguments (the AI message is replaced by id), and approved ones run as usual. When every call of the
 * turn was rejected, the model is called again at once. A non-interactive run never pauses: each rule's
 * `non_interactive` decision applies.
 */
export function approvalMiddleware(options: ApprovalMiddlewareOptions): MiddlewareSpec {
  const { section, lookup, logger } = options;
  const now = options.now ?? (() => new Date());
  const rules = compileApprovalRules(section);
  const askRules = rules.some((rule) => rule.ask);
  return {
    name: "approval",
    state: { [APPROVED_TOOL_CALLS_KEY]: z.array(z.string()).optional() },
    afterModel: {
      canJumpTo: ["model"],
      hook: async (state, runtime) => {
        const last = state.messages.at(-1);
        if (!last || !AIMessage.isInstance(last) || !last.tool_calls?.length) return undefined;
        const context = (runtime?.context ?? {}) as Record<string, unknown>;
        const traceId = resolveTraceId(context[TRACE_METADATA_KEY]);
        const matched: Array<{ call: ToolCall; rule: CompiledRule }> = [];
        const askedReasons = new Map<string, string>();
        for (const call of last.tool_calls) {
          if (!call.id) continue;
          let rule = matchRule(rules, call, lookup.groupOf(call.name));
          if (!rule && askRules && options.askGuardrails) {
            const reasons = await options.askGuardrails(call, context);
            if (reasons) {
              rule = matchRule(rules, call, lookup.groupOf(call.name), true);
              askedReasons.set(call.id, reasons.map((r) => `${r.code}: ${r.message}`).join("; "));
            }
          }
          if (rule) matched.push({ call, rule });
        }
        if (matched.length === 0) return undefined;
        const pendingCalls: PendingApprovalCall[] = matched.map(({ call, rule }) => ({
          tool_call_id: call.id as string,
          tool: call.name,
          args: (call.args ?? {}) as Record<string, unknown>,
          rule: rule.name,
          reason: askedReasons.get(call.id as string) || rule.reason,
        }));
        const ruleOf = new Map(matched.map(({ call, rule }) => [call.id as string, rule]));
        const decided = new Map<string, ApprovalDecision>();
        if (context.non_interactive === true || options.subagent === true) {
          for (const call of pendingCalls) {
            const rule = ruleOf.get(call.tool_call_id) as CompiledRule;
            decided.set(
              call.tool_call_id,
              rule.nonInteractive === "approve"
                ? { decision: "approve" }
                : {
                    decision: "reject",
                    reason: `this run cannot wait for a person (${options.subagent ? "a subagent" : "non-interactive"}), and rule "${rule.name}" rejects by default.`,
                  },
            );
          }
          logger.info(
            { trace_id: traceId, calls: pendingCalls.map((c) => c.tool_call_id) },
            "approval: non-interactive run, rule defaults applied",
          );
          await emitCustomEvent({
            type: APPROVAL_AUTO_DECIDED_EVENT,
            trace_id: traceId,
            decisions: Object.fromEntries(decided),
          }).catch(() => undefined);
        } else {
          let error: string | undefined;
          for (;;) {
            const open = pendingCalls.filter((c) => !decided.has(c.tool_call_id));
            if (open.length === 0) break;
            const answer: unknown = interrupt(approvalInterrupt(open, ruleOf, now(), error));
            const checked = decideCalls(answer, open, lookup);
            // Vetted before the resume (AntlerClient.resume); one that slipped past (another resume path) is asked again.
            if (!checked.ok) {
              error = `${checked.where}: ${checked.message}`;
              continue;
            }
            error = undefined;
            for (const [id, decision] of checked.decisions) decided.set(id, decision);
          }
        }
        return applyDecisions(last, decided, traceId, context, logger);
      },
    },
  };
}

/** The interrupt for the calls still open: the earliest of their rules' timeouts, and each rule's on_timeout. */
function approvalInterrupt(
  open: readonly PendingApprovalCall[],
  ruleOf: ReadonlyMap<string, CompiledRule>,
  at: Date,
  error: string | undefined,
): ApprovalInterrupt {
  const rule = (call: PendingApprovalCall) => ruleOf.get(call.tool_call_id) as CompiledRule;
  const timeoutMs = Math.min(...open.map((c) => rule(c).timeoutMs));
  const onTimeout = (call: PendingApprovalCall): ApprovalDecision =>
    rule(call).onTimeout === "approve"
      ? { decision: "approve" }
      : { decision: "reject", reason: `nobody approved this call within the approval timeout of rule "${rule(call).name}".` };
  return {
    kind: APPROVAL_INTERRUPT_KIND,
    calls: [...open],
    expires_at: new Date(at.getTime() + timeoutMs).toISOString(),
    on_timeout: { decisions: Object.fromEntries(open.map((c) => [c.tool_call_id, onTimeout(c)])) },
    ...(error ? { error } : {}),
  };
}

async function applyDecisions(
  last: AIMessage,
  decided: ReadonlyMap<string, ApprovalDecision>,
  traceId: string,
  context: Record<string, unknown>,
  logger: Logger,
): Promise<{ messages: Array<AIMessage | ToolMessage>; [APPROVED_TOOL_CALLS_KEY]: string[]; jumpTo?: "model" }> {
  const refusals: ToolMessage[] = [];
  let edited = false;
  const calls = (last.tool_calls ?? []).map((call) => {
    const decision = call.id ? decided.get(call.id) : undefined;
    if (decision?.decision === "edit") {
      edited = true;
      return { ...call, args: decision.args };
    }
    if (decision?.decision === "reject") {
      const reason = decision.reason ?? "the person reviewing it said no.";
      refusals.push(
        new ToolMessage({
          content: `Refused: ${call.name} was not run: a person rejected this call: ${reason}\nDo not retry it unchanged; act on the reason.`,
          tool_call_id: call.id as string,
          name: call.name,
          status: "error",
          additional_kwargs: { antler_approval: { decision: "reject", reason } },
        }),
      );
    }
    return call;
  });
  const summary = Object.fromEntries([...decided].map(([id, d]) => [id, d.decision]));
  logger.info({ trace_id: traceId, run_id: str(context.run_id), decisions: summary }, "approval decisions applied");
  await emitCustomEvent({ type: APPROVAL_DECIDED_EVENT, trace_id: traceId, decisions: Object.fromEntries(decided) }).catch(() => undefined);
  const messages: Array<AIMessage | ToolMessage> = [];
  // Same id: the messages reducer replaces the model's message, so the tools run with the edited arguments.
  if (edited) {
    messages.push(
      new AIMessage({
        content: last.content,
        ...(last.id ? { id: last.id } : {}),
        ...(last.name ? { name: last.name } : {}),
        tool_calls: calls,
        additional_kwargs: last.additional_kwargs,
        response_metadata: last.response_metadata,
        ...(last.usage_metadata ? { usage_metadata: last.usage_metadata } : {}),
      }),
    );
  }
  messages.push(...refusals);
  const everyCallRejected = refusals.length === (last.tool_calls ?? []).length;
  const approved = [...decided].filter(([, d]) => d.decision !== "reject").map(([id]) => id);
  return everyCallRejected
    ? { messages, [APPROVED_TOOL_CALLS_KEY]: approved, jumpTo: "model" }
    : { messages, [APPROVED_TOOL_CALLS_KEY]: approved };
}
