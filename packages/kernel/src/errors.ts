import { redactSecrets, redactText } from "./config/redact.js";

/**
 * Every error Antler raises on purpose is an `AntlerError` with a stable `code`. Messages follow one shape:
 * what was wrong, where (a config path, a plugin or tool name), and what to do about it.
 */
export const ErrorCodes = {
  CONFIG_NOT_FOUND: "ANTLER_ERR_CONFIG_NOT_FOUND",
  CONFIG_PARSE: "ANTLER_ERR_CONFIG_PARSE",
  CONFIG_INVALID: "ANTLER_ERR_CONFIG_INVALID",
  CONFIG_ENV_MISSING: "ANTLER_ERR_CONFIG_ENV_MISSING",
  PLUGIN_NOT_FOUND: "ANTLER_ERR_PLUGIN_NOT_FOUND",
  PLUGIN_NO_DEFAULT_EXPORT: "ANTLER_ERR_PLUGIN_NO_DEFAULT_EXPORT",
  PLUGIN_INVALID_MANIFEST: "ANTLER_ERR_PLUGIN_INVALID_MANIFEST",
  PLUGIN_DUPLICATE: "ANTLER_ERR_PLUGIN_DUPLICATE",
  PLUGIN_MISSING_DEPENDENCY: "ANTLER_ERR_PLUGIN_MISSING_DEPENDENCY",
  PLUGIN_DEPENDENCY_CYCLE: "ANTLER_ERR_PLUGIN_DEPENDENCY_CYCLE",
  PLUGIN_KERNEL_MISMATCH: "ANTLER_ERR_PLUGIN_KERNEL_MISMATCH",
  PLUGIN_SETUP_FAILED: "ANTLER_ERR_PLUGIN_SETUP_FAILED",
  PLUGIN_SETUP_ASYNC: "ANTLER_ERR_PLUGIN_SETUP_ASYNC",
  DI_UNREGISTERED: "ANTLER_ERR_DI_UNREGISTERED",
  DI_DUPLICATE: "ANTLER_ERR_DI_DUPLICATE",
  DI_SCOPE_DISPOSED: "ANTLER_ERR_DI_SCOPE_DISPOSED",
  HOOK_INVALID_STAGE: "ANTLER_ERR_HOOK_INVALID_STAGE",
  KERNEL_STATE: "ANTLER_ERR_KERNEL_STATE",
  KERNEL_START_FAILED: "ANTLER_ERR_KERNEL_START_FAILED",
  KERNEL_STOP_FAILED: "ANTLER_ERR_KERNEL_STOP_FAILED",
  TOOL_INVALID: "ANTLER_ERR_TOOL_INVALID",
  TOOL_NOT_FOUND: "ANTLER_ERR_TOOL_NOT_FOUND",
  RUN_CANCELLED: "ANTLER_ERR_RUN_CANCELLED",
  CONTEXT_FORBIDDEN_KEY: "ANTLER_ERR_CONTEXT_FORBIDDEN_KEY",
  PATH_UNSAFE: "ANTLER_ERR_PATH_UNSAFE",
  MODEL_NOT_FOUND: "ANTLER_ERR_MODEL_NOT_FOUND",
  MODEL_PROVIDER_NOT_FOUND: "ANTLER_ERR_MODEL_PROVIDER_NOT_FOUND",
  MODEL_CALL_FAILED: "ANTLER_ERR_MODEL_CALL_FAILED",
  /** No concurrency or rate slot of a model came free within its `queue_timeout_seconds`. */
  MODEL_RATE_LIMITED: "ANTLER_ERR_MODEL_RATE_LIMITED",
  PIPELINE_INVALID: "ANTLER_ERR_PIPELINE_INVALID",
  PIPELINE_ORDER: "ANTLER_ERR_PIPELINE_ORDER",
  SANDBOX_PROVIDER_NOT_FOUND: "ANTLER_ERR_SANDBOX_PROVIDER_NOT_FOUND",
  SANDBOX_UNAVAILABLE: "ANTLER_ERR_SANDBOX_UNAVAILABLE",
  SANDBOX_PATH_READ_ONLY: "ANTLER_ERR_SANDBOX_PATH_READ_ONLY",
  SANDBOX_NOT_FOUND: "ANTLER_ERR_SANDBOX_NOT_FOUND",
  SANDBOX_EXEC_FAILED: "ANTLER_ERR_SANDBOX_EXEC_FAILED",
  STORAGE_UNAVAILABLE: "ANTLER_ERR_STORAGE_UNAVAILABLE",
  STORAGE_BACKEND_NOT_FOUND: "ANTLER_ERR_STORAGE_BACKEND_NOT_FOUND",
  STORAGE_MIGRATION_FAILED: "ANTLER_ERR_STORAGE_MIGRATION_FAILED",
} as const;

/** The kernel's own codes. */
export type KernelErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/**
 * An error code: one of the kernel's, or a plugin's own in the same `ANTLER_ERR_<AREA>_<WHAT>` shape (for
 * example `ANTLER_ERR_BATCH_NOT_FOUND`), declared in the plugin without touching the kernel.
 */
export type ErrorCode = KernelErrorCode | `ANTLER_ERR_${string}`;

export interface AntlerErrorOptions {
  /** Where the problem is: a YAML path such as `plugins[2].config.api_key`, a plugin or a tool name. */
  where?: string;
  /** What the user can do about it. */
  hint?: string;
  cause?: unknown;
  /** Structured facts for programs (line numbers, candidate names, ...). Redacted like run records and logs. */
  details?: Record<string, unknown>;
}

export class AntlerError extends Error {
  override readonly name = "AntlerError";
  readonly code: ErrorCode;
  readonly where: string | undefined;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: AntlerErrorOptions = {}) {
    // Scrubbed once here, so the HTTP body, the log line and the run record all get the same redacted form.
    super(redactText(composeMessage(message, options)), options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.where = options.where;
    this.hint = options.hint;
    this.details = redactSecrets(options.details ?? {});
  }

  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, message: this.message, where: this.where, hint: this.hint, details: this.details };
  }
}

function composeMessage(message: string, { where, hint }: AntlerErrorOptions): string {
  let out = where ? `${where}: ${message}` : message;
  if (hint) out += `\n  hint: ${hint}`;
  return out;
}

export function isAntlerError(value: unknown, code?: ErrorCode): value is AntlerError {
  return value instanceof AntlerError && (code === undefined || value.code === code);
}
