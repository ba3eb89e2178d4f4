import { AntlerError, ErrorCodes, isAntlerError } from "@antler/kernel";

/** The `data` of an SSE `error` frame: the same for the run's own stream, the log, and every joiner. */
export function runErrorData(
  error: unknown,
  runId: string,
  traceId: string,
): { code: string; message: string; run_id: string; trace_id: string } {
  const code = isAntlerError(error) ? error.code : "ANTLER_ERR_INTERNAL";
  const text = error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
  return { code, message: text, run_id: runId, trace_id: traceId };
}

/** What a run that was stopped without an error (its consumer closed the stream) is logged as. */
export function closedRunError(): AntlerError {
  return new AntlerError(ErrorCodes.RUN_CANCELLED, "the run was cancelled: its stream was closed before it ended", {
    hint: 'Send on_disconnect: "continue" with the run to let it finish after the client goes away.',
  });
}
