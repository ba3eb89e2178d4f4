import { AntlerError, type AntlerErrorOptions, type ErrorCode } from "@antler/kernel";

/**
 * The scheduler's error codes. They follow the kernel's `ANTLER_ERR_*` shape; the kernel's `ErrorCodes` list is
 * closed, so they are declared here and carried by an ordinary `AntlerError` (the CLI and gateway treat them
 * like any other coded error).
 */
export const SchedulerErrorCodes = {
  /** A task definition is wrong: bad cron expression, unknown timezone, a `once` time in the past, ... */
  INVALID: "ANTLER_ERR_SCHEDULE_INVALID",
  /** No task with that id (for this user). */
  NOT_FOUND: "ANTLER_ERR_SCHEDULE_NOT_FOUND",
} as const;

export type SchedulerErrorCode = (typeof SchedulerErrorCodes)[keyof typeof SchedulerErrorCodes];

export function schedulerError(code: SchedulerErrorCode, message: string, options: AntlerErrorOptions = {}): AntlerError {
  return new AntlerError(code as unknown as ErrorCode, message, options);
}

export function isSchedulerError(value: unknown, code?: SchedulerErrorCode): value is AntlerError {
  return (
    value instanceof AntlerError && (code === undefined ? value.code.startsWith("ANTLER_ERR_SCHEDULE_") : (value.code as string) === code)
  );
}
