import { TRACE_METADATA_KEY } from "@antler/kernel";

/**
 * Runtime-context keys only the server may set: the trace id, sandbox lease and scope identities, and
 * `non_interactive`. A caller-sent value for any of them is dropped; honouring it would let a client pose
 * as the scheduler or pin another run's sandbox.
 */
export const SERVER_OWNED_CONTEXT_KEYS: readonly string[] = Object.freeze([
  TRACE_METADATA_KEY,
  "trace_id",
  "non_interactive",
  "sandbox_id",
  "sandbox_lease",
  "sandbox_scope",
  "user_id",
  // Authorization: the role comes from the gateway's API-key mapping or an in-process caller's `userRole`.
  "user_role",
  "is_internal",
]);

export interface Principal {
  /** `internal` is only for in-process callers such as the scheduler; never for a network client. */
  readonly kind: "internal" | "user";
  readonly userId: string;
  /** The caller's role for authorization (`authorization.roles`); the gateway sets it from the API key's `role`. */
  readonly role?: string | undefined;
}

export const INTERNAL_PRINCIPAL: Principal = Object.freeze({ kind: "internal", userId: "internal" });

export interface SanitizedContext {
  readonly context: Record<string, unknown>;
  /** Server-owned keys the caller sent that were dropped. */
  readonly dropped: string[];
}

/**
 * Builds a run's runtime context from what the caller sent plus the server's own stamps. Server-owned keys
 * from the caller are accepted only from the internal principal, and the trace id is always the server's.
 */
export function sanitizeRunContext(
  callerContext: Readonly<Record<string, unknown>> | null | undefined,
  options: { principal: Principal; traceId: string; server?: Readonly<Record<string, unknown>> },
): SanitizedContext {
  const context: Record<string, unknown> = {};
  const dropped: string[] = [];
  const trusted = options.principal.kind === "internal";
  for (const [key, value] of Object.entries(callerContext ?? {})) {
    const isTraceKey = key === TRACE_METADATA_KEY || key === "trace_id";
    if (SERVER_OWNED_CONTEXT_KEYS.includes(key) && (!trusted || isTraceKey)) {
      dropped.push(key);
      continue;
    }
    context[key] = value;
  }
  Object.assign(context, options.server ?? {});
  context[TRACE_METADATA_KEY] = options.traceId;
  if (!trusted || context.user_id === undefined) context.user_id = options.principal.userId;
  if (trusted) context.is_internal = true;
  return { context, dropped };
}
