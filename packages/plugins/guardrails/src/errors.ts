/** The plugin's error codes, in the kernel's `ANTLER_ERR_*` shape. */
export const GuardrailErrorCodes = Object.freeze({
  /** `guardrails.providers[i].use` names no registered provider, or its `config` does not validate. */
  PROVIDER_INVALID: "ANTLER_ERR_GUARDRAIL_PROVIDER_INVALID",
  /** A provider failed to answer (timeout, non-2xx, bad JSON, a throw); `fail_closed` decides what it means. */
  PROVIDER_FAILED: "ANTLER_ERR_GUARDRAIL_PROVIDER_FAILED",
});
