import { isAntlerError } from "@antler/kernel";
import type { RunCallOptions, StreamEvent } from "@antler/plugin-runtime";
import type { GatewayRequest } from "@antler/plugin-runtime/routes";

const THREAD_NOT_FOUND = "ANTLER_ERR_THREAD_NOT_FOUND";

/** Who runs it: the request's user, role (for authorization) and trace id, as every protocol's run is started. */
export function callerRunOptions(req: GatewayRequest<unknown>): Pick<RunCallOptions, "userId" | "userRole" | "traceId"> {
  return {
    userId: req.userId,
    ...(req.principal.role !== undefined ? { userRole: req.principal.role } : {}),
    traceId: req.traceId,
  };
}

/**
 * The thread a run goes on: one the caller owns, or with `create` (a conversation's first message) a new one under
 * that id. Another user's thread stays THREAD_NOT_FOUND (a 404), never created over.
 */
export async function ensureThread(req: GatewayRequest<unknown>, threadId: string, create: boolean): Promise<void> {
  try {
    await req.client.getThreadRecord(threadId, { userId: req.userId });
  } catch (error) {
    if (!isAntlerError(error, THREAD_NOT_FOUND) || !create) throw error;
    await req.client.createThread({ threadId, userId: req.userId });
  }
}

/** A run started for a protocol route and admitted: its events, and the way to stop it. */
export interface LaunchedRun {
  /** The run's events from its start (the one pulled to learn the admission comes first). */
  events: AsyncGenerator<StreamEvent>;
  /** Cancels the run: its reader is gone, or the request said so. */
  stop(reason: string): void;
}

/**
 * Starts a run through the gateway's embedded client (so the run event log records it) and resolves once the run
 * is admitted, so a refusal (a busy thread, capacity, an unknown model) rejects here and becomes a coded HTTP error
 * before the 200, not an error inside the stream. `cancelWith`: a signal that also cancels the run (the request's,
 * when the client hanging up is a cancel); `stop` always does.
 */
export async function launchRun(
  client: GatewayRequest["client"],
  message: string,
  options: Omit<RunCallOptions, "signal" | "onAdmitted">,
  cancelWith?: AbortSignal,
): Promise<LaunchedRun> {
  return launchStream((signal, onAdmitted) => client.stream(message, { ...options, signal, onAdmitted }), cancelWith);
}

/**
 * `launchRun` for a paused run (an approval): continues it under its own run id with `resume` (the decision), once
 * the runtime has checked the decision (a refusal rejects here: the run stays paused).
 */
export async function launchResume(
  client: GatewayRequest["client"],
  target: { threadId: string; runId: string; userId: string },
  resume: unknown,
  cancelWith?: AbortSignal,
): Promise<LaunchedRun> {
  return launchStream(
    (signal, onAdmitted) => client.resumeStream(target.threadId, target.runId, resume, { userId: target.userId, signal, onAdmitted }),
    cancelWith,
  );
}

async function launchStream(
  start: (signal: AbortSignal, onAdmitted: () => void) => AsyncGenerator<StreamEvent, void, undefined>,
  cancelWith?: AbortSignal,
): Promise<LaunchedRun> {
  const hangUp = new AbortController();
  let admitted: () => void = () => {};
  const admission = new Promise<void>((resolve) => {
    admitted = resolve;
  });
  const stream = start(cancelWith ? AbortSignal.any([cancelWith, hangUp.signal]) : hangUp.signal, () => admitted());
  // Pull until the run is admitted: a refusal rejects the first step before admission.
  const firstStep = stream.next();
  firstStep.catch(() => undefined);
  await Promise.race([admission, firstStep]);
  const events = (async function* (): AsyncGenerator<StreamEvent> {
    const step = await firstStep;
    if (step.done) return;
    yield step.value;
    yield* stream;
  })();
  return {
    events,
    stop(reason) {
      // An async generator cannot be closed while a step is pending: the signal is what reaches the model call.
      hangUp.abort(reason);
      void stream.return(undefined).catch(() => undefined);
    },
  };
}
