import { createToken, type Logger, type PluginContext } from "@antler/kernel";
import type { z } from "zod";

/** What a provider is asked before one tool call runs. Field names are the wire format of the HTTP provider too. */
export interface GuardrailRequest {
  readonly tool_name: string;
  /** The call's arguments as the model sent them. */
  readonly tool_input: Readonly<Record<string, unknown>>;
  readonly user_id: string;
  /** The caller's role (`authorization.roles`), after `default_role`; null when authorization is off and none was sent. */
  readonly user_role: string | null;
  readonly thread_id: string | null;
  readonly run_id: string | null;
  readonly tool_call_id: string;
  /** The custom agent's name, or null for the lead agent without one. */
  readonly agent: string | null;
  /** A subagent (the `task` tool) is making the call. */
  readonly is_subagent: boolean;
  /** The run was started by the internal principal (the scheduler), not a user. */
  readonly is_internal: boolean;
  /** The run's trace id, for the provider's own logs. */
  readonly trace_id: string | null;
}

export interface GuardrailReason {
  /** Stable and machine-readable, e.g. `tool_denylisted`, `role_forbids_tool_group`, `provider_error`. */
  readonly code: string;
  /** One sentence for the model and the operator; it need not repeat the tool's name (the refusal names it). */
  readonly message: string;
}

export interface GuardrailDecision {
  readonly allow: boolean;
  /** Why (required to be non-empty on a denial, so the model learns what to do instead). */
  readonly reasons: readonly GuardrailReason[];
  /** Which policy decided, for audit (`allowlist`, `rbac`, a policy service's id). */
  readonly policy_id?: string | undefined;
  /**
   * With `allow: false`: a person may allow the call instead. An `approval:` rule with `guardrail: ask` then pauses
   * the run for a decision (the reasons say why); without such a rule the call is denied as usual.
   */
  readonly ask?: boolean | undefined;
}

/**
 * A policy asked before every tool call. Throwing (or rejecting) is a provider error, which the section's
 * `fail_closed` turns into a denial (`provider_error`) or an allowed call with a warning. Honour `signal`: it aborts
 * when the run is cancelled.
 */
export interface GuardrailProvider {
  /** For logs and the `provider_error` reason. */
  readonly name: string;
  evaluate(request: GuardrailRequest, options: { signal?: AbortSignal | undefined }): GuardrailDecision | Promise<GuardrailDecision>;
}

/** What `create` gets besides its validated config. */
export interface GuardrailProviderContext {
  readonly logger: Logger;
  /** Config path of this provider's entry, for error messages (`guardrails.providers[0].config`). */
  readonly where: string;
}

/**
 * A kind of provider that config names with `use:`. `configSchema` validates `config:` (errors name the YAML path);
 * `create` runs once at boot, synchronously, with no I/O.
 */
export interface GuardrailProviderFactory<S extends z.ZodType = z.ZodType> {
  /** The name config uses (`use: allowlist`); lower-case letters, digits, `_` and `-`. */
  readonly use: string;
  readonly configSchema?: S | undefined;
  create(config: z.output<S>, context: GuardrailProviderContext): GuardrailProvider;
}

export interface GuardrailProviderRegistry {
  add(factory: GuardrailProviderFactory): void;
  get(use: string): GuardrailProviderFactory | undefined;
  names(): string[];
}

/** The registry `@antler/plugin-guardrails` binds; provider plugins list that plugin in `dependsOn`. */
export const GUARDRAIL_PROVIDERS = createToken<GuardrailProviderRegistry>("plugin-guardrails.providers");

export const GUARDRAILS_PLUGIN_NAME = "@antler/plugin-guardrails";

/**
 * What a third-party provider plugin calls in `setup` (with `dependsOn: ["@antler/plugin-guardrails"]`): makes
 * `use: <factory.use>` available under `guardrails.providers` in config.yaml.
 */
export function registerGuardrailProvider<S extends z.ZodType>(
  ctx: Pick<PluginContext<unknown>, "services">,
  factory: GuardrailProviderFactory<S>,
): void {
  ctx.services.resolve(GUARDRAIL_PROVIDERS).add(factory as unknown as GuardrailProviderFactory);
}

/** The custom stream event a refusal emits. */
export const GUARDRAIL_DENIED_EVENT = "guardrail_denied";

export interface GuardrailDeniedEvent {
  readonly type: typeof GUARDRAIL_DENIED_EVENT;
  readonly tool: string;
  readonly tool_call_id: string;
  readonly reasons: readonly GuardrailReason[];
  readonly policy_id: string | null;
  readonly trace_id: string | null;
  readonly run_id: string | null;
}
