import { AntlerError, definePlugin, resolveTraceId, TRACE_METADATA_KEY } from "@antler/kernel";
import { provideRunAdmission } from "@antler/plugin-runtime/admission";
import { RuntimeErrorCodes } from "@antler/plugin-runtime/errors";
import { provideRunResumeCheck } from "@antler/plugin-runtime/resume-checks";
import { approvalEnabled, approvalSection } from "./approval-config.js";
import { authorizationSection, guardrailsConfigSections, guardrailsSection } from "./config.js";
import { GUARDRAIL_PROVIDERS, GUARDRAILS_PLUGIN_NAME, type GuardrailProvider } from "./contract.js";
import { GuardrailErrorCodes } from "./errors.js";
import { allowlistProviderFactory } from "./providers/allowlist.js";
import { httpProviderFactory } from "./providers/http.js";
import { RolePolicy, rbacGroupOf } from "./rbac.js";
import { createGuardrailProviderRegistry } from "./registry.js";

export const PLUGIN_VERSION = "0.1.0";

export default definePlugin({
  name: GUARDRAILS_PLUGIN_NAME,
  version: PLUGIN_VERSION,
  kernel: "^0.1.0",
  description: "Guardrail providers asked before every tool call, and role-based tool and model authorization.",
  configSections: guardrailsConfigSections,
  setup(ctx) {
    const registry = createGuardrailProviderRegistry();
    ctx.provide(GUARDRAIL_PROVIDERS, { useValue: registry });
    registry.add(allowlistProviderFactory);
    registry.add(httpProviderFactory);

    const guard = guardrailsSection(ctx.kernelConfig);
    const authz = authorizationSection(ctx.kernelConfig);
    const policy = authz.enabled ? new RolePolicy(authz) : undefined;

    // Provider plugins set up after this one (they depend on it), so `use:` names are resolved once every setup ran.
    const configured: Array<{ provider: GuardrailProvider; failClosed: boolean }> = [];
    if (guard.enabled) {
      ctx.hooks.boot.tap(() => {
        const entries = guard.provider
          ? [{ entry: guard.provider, where: "guardrails.provider" }]
          : guard.providers.map((entry, i) => ({ entry, where: `guardrails.providers[${i}]` }));
        for (const { entry, where } of entries) {
          const factory = registry.get(entry.use);
          if (!factory) {
            throw new AntlerError(GuardrailErrorCodes.PROVIDER_INVALID, `guardrail provider "${entry.use}" is not registered`, {
              where: `${where}.use`,
              hint: `Registered providers: ${registry.names().join(", ")}. A third-party provider's plugin must be listed under \`plugins:\`.`,
            });
          }
          let config: unknown = entry.config;
          if (factory.configSchema) {
            const parsed = factory.configSchema.safeParse(entry.config);
            if (!parsed.success) {
              const issue = parsed.error.issues[0];
              const path = issue?.path.length ? `.${issue.path.join(".")}` : "";
              throw new AntlerError(GuardrailErrorCodes.PROVIDER_INVALID, `${issue?.message ?? "invalid provider config"}`, {
                where: `${where}.config${path}`,
                hint: `Check the ${entry.use} provider's settings in docs/plugins/guardrails-and-approval.md (section Guardrails and authorization).`,
              });
            }
            config = parsed.data;
          }
          configured.push({
            provider: factory.create(config, { logger: ctx.logger, where: `${where}.config` }),
            failClosed: guard.fail_closed,
          });
        }
      });
    }

    // What RBAC knows of each tool name: its group (string), a framework tool (null). Filled as tools are
    // assembled (before the role filter) and as LangChain binds pipeline tools, so a forged name stays unknown.
    const groups = new Map<string, string | null>();
    if (policy) {
      // Tapped at boot, after every plugin's setup: the last tap of the last stage, so tools other plugins add at
      // stage `last` (batch and subagent tools) are filtered too, whatever the plugin order in config.yaml.
      ctx.hooks.boot.tap(() => {
        ctx.hooks.assembleTools.tap(
          (entries, assembly) => {
            for (const entry of entries) if (!groups.has(entry.tool.name)) groups.set(entry.tool.name, rbacGroupOf(entry));
            return policy.filterTools(entries, policy.roleOf(assembly.context.user_role as string | undefined));
          },
          { stage: "last" },
        );
      });
      provideRunAdmission(ctx, (run) => {
        const role = policy.roleOf(run.userRole);
        if (!policy.knows(role)) {
          throw new AntlerError(RuntimeErrorCodes.MODEL_FORBIDDEN, `role "${role}" is not configured, so it may use no model`, {
            where: "authorization.roles",
            hint: `Configured roles: ${policy.roleNames().join(", ")}. Give the API key (or the AntlerClient call) one of them.`,
            details: { role, model: run.modelName },
          });
        }
        if (!policy.allowsModel(role, run.modelName)) {
          throw new AntlerError(RuntimeErrorCodes.MODEL_FORBIDDEN, `role "${role}" may not use model "${run.modelName}"`, {
            where: `authorization.roles.${role}.models`,
            hint: `Models this role may use: ${policy.modelsOf(role).join(", ") || "none"}. Ask for one of them, or ask an operator to add the model to the role.`,
            details: { role, model: run.modelName },
          });
        }
      });
    }

    const approval = approvalSection(ctx.kernelConfig);
    if (approvalEnabled(approval)) {
      // What the approval rules and the edit check need of each tool: its group and its argument schema.
      const approvalTools = new Map<string, { group: string | null; schema: unknown }>();
      ctx.hooks.assembleTools.tap(
        (entries) => {
          for (const entry of entries) approvalTools.set(entry.tool.name, { group: rbacGroupOf(entry), schema: entry.tool.schema });
          return entries;
        },
        { stage: "last" },
      );
      const lookup = {
        groupOf: (name: string) => approvalTools.get(name)?.group,
        schemaOf: (name: string) => approvalTools.get(name)?.schema,
      };
      ctx.middleware.add(
        {
          name: "approval",
          create: async (assembly) => {
            const { approvalMiddleware } = await import("./approval.js");
            const { guardrailRequestFor } = await import("./middleware.js");
            return approvalMiddleware({
              section: approval,
              lookup,
              logger: ctx.logger,
              subagent: assembly.subagent,
              // The configured providers (RBAC never asks): the first that does not allow decides.
              askGuardrails: async (call, context) => {
                const traceId = resolveTraceId(context[TRACE_METADATA_KEY]);
                const request = guardrailRequestFor(call, call.args, context, {
                  subagent: assembly.subagent,
                  defaultRole: policy ? authz.default_role : null,
                  traceId,
                });
                for (const { provider } of configured) {
                  // A failing provider is left to the Guardrail middleware, whose fail_closed decides at the call.
                  const decision = await Promise.resolve()
                    .then(() => provider.evaluate(request, {}))
                    .catch(() => null);
                  if (!decision || decision.allow) continue;
                  return decision.ask === true ? decision.reasons : null;
                }
                return null;
              },
            });
          },
        },
        { after: "DanglingToolCall" },
      );
      provideRunResumeCheck(ctx, async ({ interrupt, resume }) => {
        if (interrupt.value.kind !== "approval") return undefined;
        const { decideCalls } = await import("./approval.js");
        const pending = (interrupt.value.calls ?? []) as Parameters<typeof decideCalls>[1];
        const checked = decideCalls(resume, pending, lookup);
        if (!checked.ok) {
          throw new AntlerError(RuntimeErrorCodes.RESUME_INVALID, checked.message, {
            where: checked.where,
            hint: 'Send { "decision": "approve" }, { "decision": "reject", "reason": "..." }, { "decision": "edit", "args": {...} } (one pending call), or { "decisions": { "<tool_call_id>": ... } }. The run is still paused.',
            details: { pending: pending.map((call) => call.tool_call_id) },
          });
        }
        return { decisions: Object.fromEntries(checked.decisions) };
      });
    }

    if (policy || guard.enabled) {
      ctx.middleware.add(
        {
          name: "guardrail",
          create: async (assembly) => {
            const { guardrailMiddleware } = await import("./middleware.js");
            const { rbacProvider } = await import("./rbac.js");
            const rbac = policy ? [{ provider: rbacProvider(policy, (name) => groups.get(name)), failClosed: authz.fail_closed }] : [];
            return guardrailMiddleware({
              providers: [...rbac, ...configured],
              subagent: assembly.subagent,
              defaultRole: policy ? authz.default_role : null,
              noteBoundTool: (name) => {
                if (!groups.has(name)) groups.set(name, null);
              },
              logger: ctx.logger,
            });
          },
        },
        { after: "DanglingToolCall" },
      );
    }
  },
});
