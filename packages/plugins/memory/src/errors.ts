import { AntlerError, type AntlerErrorOptions, type ErrorCode } from "@antler/kernel";

/**
 * Memory's error codes, in the kernel's `ANTLER_ERR_*` shape. The kernel's list is closed, so they travel in an
 * ordinary `AntlerError`; the gateway maps INVALID to 400 and NOT_FOUND to 404.
 */
export const MemoryErrorCodes = {
  /** Bad input: an empty fact, an unknown category, a malformed import file, a bad agent name. */
  INVALID: "ANTLER_ERR_MEMORY_INVALID",
  /** No fact with that id for this user and agent (another user's fact is reported the same way). */
  NOT_FOUND: "ANTLER_ERR_MEMORY_NOT_FOUND",
} as const;

export type MemoryErrorCode = (typeof MemoryErrorCodes)[keyof typeof MemoryErrorCodes];

export function memoryError(code: MemoryErrorCode, message: string, options: AntlerErrorOptions = {}): AntlerError {
  return new AntlerError(code as unknown as ErrorCode, message, options);
}

export function isMemoryError(value: unknown, code?: MemoryErrorCode): value is AntlerError {
  return (
    value instanceof AntlerError && (code === undefined ? value.code.startsWith("ANTLER_ERR_MEMORY_") : (value.code as string) === code)
  );
}
