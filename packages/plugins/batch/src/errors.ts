import { AntlerError, type AntlerErrorOptions, type ErrorCode } from "@antler/kernel";

/**
 * The batch plugin's error codes. Plugins declare their own codes in the kernel's `ANTLER_ERR_*`
 * shape (the kernel's `ErrorCode` type accepts them) and raise them as ordinary `AntlerError`s.
 */
export const BatchErrorCodes = Object.freeze({
  /** Unknown batch id, or a batch that belongs to another user (the two are indistinguishable on purpose). */
  NOT_FOUND: "ANTLER_ERR_BATCH_NOT_FOUND",
  /** A submission that breaks a limit: empty, too many items, a bad or duplicate key, a prompt too long. */
  INVALID: "ANTLER_ERR_BATCH_INVALID",
  /** The batch plugin was used before its store was opened (the kernel was never started). */
  NOT_STARTED: "ANTLER_ERR_BATCH_NOT_STARTED",
});

export function batchError(code: ErrorCode, message: string, options: AntlerErrorOptions = {}): AntlerError {
  return new AntlerError(code, message, options);
}

export function batchNotFound(batchId: string): AntlerError {
  return new AntlerError(BatchErrorCodes.NOT_FOUND, `batch ${JSON.stringify(batchId)} not found`, {
    hint: "Check the id that batch_task returned. Batches are visible only to the user who submitted them.",
    details: { batch_id: batchId },
  });
}
