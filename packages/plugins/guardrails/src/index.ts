export {
  APPROVAL_AUTO_DECIDED_EVENT,
  APPROVAL_DECIDED_EVENT,
  APPROVAL_INTERRUPT_KIND,
  type ApprovalDecision,
  type ApprovalInterrupt,
  type ApprovalMiddlewareOptions,
  type ApprovalResume,
  approvalMiddleware,
  approvalResumeSchema,
  type PendingApprovalCall,
} from "./approval.js";
export { type ApprovalSection, approvalSectionSchema } from "./approval-config.js";
export {
  type AuthorizationSection,
  authorizationSectionSchema,
  type GuardrailsSection,
  guardrailsConfigSections,
  guardrailsSectionSchema,
  type RoleConfig,
} from "./config.js";
export {
  GUARDRAIL_DENIED_EVENT,
  GUARDRAIL_PROVIDERS,
  GUARDRAILS_PLUGIN_NAME,
  type GuardrailDecision,
  type GuardrailDeniedEvent,
  type GuardrailProvider,
  type GuardrailProviderContext,
  type GuardrailProviderFactory,
  type GuardrailProviderRegistry,
  type GuardrailReason,
  type GuardrailRequest,
  registerGuardrailProvider,
} from "./contract.js";
export { GuardrailErrorCodes } from "./errors.js";
export {
  type AskedProvider,
  GUARDRAIL_REFUSAL_KEY,
  type GuardrailMiddlewareOptions,
  guardrailMiddleware,
  refusalReason,
} from "./middleware.js";
export { default, PLUGIN_VERSION } from "./plugin.js";
export { allowlistConfigSchema, allowlistProviderFactory } from "./providers/allowlist.js";
export { GuardrailProviderError, httpDecisionSchema, httpProviderConfigSchema, httpProviderFactory } from "./providers/http.js";
export { RolePolicy, rbacGroupOf, rbacProvider, type ToolGroupLookup } from "./rbac.js";
export { createGuardrailProviderRegistry } from "./registry.js";
