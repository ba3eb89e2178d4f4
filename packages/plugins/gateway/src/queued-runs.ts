import { AntlerError, type ErrorCode } from "@antler/kernel";
import type { AntlerClient, RunCallOptions, RunResult } from "@antler/plugin-runtime";
import { GatewayErrorCodes } from "./errors.js";
import { followedEvents, followRun } from "./follow-run.js";
import type { RunEventLog } from "./run-events/log.js";
import type { LoggedEvent } from "./run-events/store.js";

// `runs.execute: false`: this gateway executes no run. A run it accepts is recorded as queued work (`enqueue`) for an
// executor (`antler worker`, or a gateway with `runs.execute: true`), and the request follows it from the run event
// log, the same way `GET .../runs/{run}/stream` joins a run running anywhere.

type QueuedRunOptions = Omit<RunCallOptions, "signal" | "onAdmitted"> & { runId: string; threadId: string; userId: string };

interface Deps {
  client: AntlerClient;
  runEvents: RunEventLog | null;
}

/** Queues the run and answers its logged events from the start (the metadata frame is 1), live until its end. */
export async function enqueueAndFollow(
  deps: Deps,
  message: string,
  options: QueuedRunOptions,
  follow: { full: boolean; signal: AbortSignal },
): Promise<{ traceId: string; items: AsyncGenerator<LoggedEvent> }> {
  const record = await deps.client.enqueue(message, options);
  const plan = await followRun(deps, {
    userId: options.userId,
    threadId: options.threadId,
    runId: record.run_id,
    afterSeq: 0,
    full: follow.full,
    signal: follow.signal,
  });
  // A queued run has logged nothing yet, so its log always has something to stream.
  if (plan.kind === "caught-up") return { traceId: record.trace_id, items: (async function* () {})() };
  return plan;
}

/**
 * `POST /runs/wait` without executing: queues the run and reads its logged events to the end, answering what
 * `invoke` answers (the run's result, paused or not). An error the run ended with is thrown with its code.
 */
export async function enqueueAndWait(deps: Deps, message: string, options: QueuedRunOptions, signal: AbortSignal): Promise<RunResult> {
  const record = await deps.client.enqueue(message, options);
  const events = await followedEvents(deps, options.userId, options.threadId, record.run_id, { afterSeq: 0, signal });
  let values: RunResult["values"] | undefined;
  let interrupt: Record<string, unknown> | undefined;
  for await (const { event, data } of events ?? []) {
    const body = data as Record<string, unknown>;
    if (event === "values") values = data as RunResult["values"];
    if (event === "custom" && body.type === "run_paused") interrupt = body.interrupt as Record<string, unknown>;
    if (event === "error") {
      const code = (typeof body.code === "string" ? body.code : "ANTLER_ERR_INTERNAL") as ErrorCode;
      throw new AntlerError(code, typeof body.message === "string" ? body.message : "the run failed", {
        hint: "GET /api/threads/{id}/runs/{run_id} has the run's final status.",
        details: { run_id: record.run_id },
      });
    }
    if (event === "end") {
      const finalValues = values ?? { title: null, messages: [], artifacts: [], summary_text: null, todos: null, stop_reason: null };
      const last = [...finalValues.messages].reverse().find((m) => m.type === "ai");
      return {
        run_id: record.run_id,
        thread_id: options.threadId,
        trace_id: record.trace_id,
        status: interrupt ? "paused" : "success",
        ...(interrupt ? { interrupt } : {}),
        output: last?.content ?? "",
        values: finalValues,
        usage: body.usage as RunResult["usage"],
      };
    }
  }
  throw new AntlerError(GatewayErrorCodes.RUN_EVENTS_INCOMPLETE, `run ${record.run_id} ended without logging its end`, {
    hint: "GET /api/threads/{id}/runs/{run_id} has its final status; GET /api/threads/{id}/state the thread as it was left.",
  });
}

/**
 * With `on_disconnect: cancel`, the caller going away cancels the queued run (wherever it runs by then). Returns the
 * function that stops listening, for when the answer is complete.
 */
export function cancelOnHangUp(
  client: AntlerClient,
  signal: AbortSignal,
  run: { userId: string; threadId: string; runId: string },
): () => void {
  const cancel = () => {
    void client.cancelRun(run.threadId, run.runId, { userId: run.userId }).catch(() => undefined);
  };
  signal.addEventListener("abort", cancel, { once: true });
  return () => signal.removeEventListener("abort", cancel);
}
