import type { AntlerClient } from "@antler/plugin-runtime";
import type { FollowedRunEvent } from "@antler/plugin-runtime/routes";
import { GatewayErrorCodes, HttpError } from "./errors.js";
import type { RunEventLog } from "./run-events/log.js";
import type { LoggedEvent } from "./run-events/store.js";

// Following a run from the run event log, on any instance: the join route, contributed routes and queued runs.

export type FollowPlan = { kind: "caught-up" } | { kind: "stream"; traceId: string; items: AsyncGenerator<LoggedEvent> };

/**
 * A user's run's logged events after `afterSeq`, live until its `end` or `error` event, from any instance: the
 * join route's and contributed routes' (`GatewayRequest.followRun`) one way in. Another user's run is
 * RUN_NOT_FOUND (404), exactly like a missing one; no log is RUN_EVENTS_DISABLED (404); pruned events 410.
 */
export async function followRun(
  deps: { client: AntlerClient; runEvents: RunEventLog | null },
  request: { userId: string; threadId: string; runId: string; afterSeq: number; full: boolean; signal: AbortSignal },
): Promise<FollowPlan> {
  const { client, runEvents } = deps;
  const { userId, threadId, runId, afterSeq } = request;
  const record = await client.getRun(threadId, runId, { userId });
  if (!runEvents) {
    throw new HttpError(
      404,
      GatewayErrorCodes.RUN_EVENTS_DISABLED,
      "this gateway keeps no run event log (stream_bridge: none), so runs cannot be joined",
      "Set stream_bridge to sql (the default) or { type: redis, redis_url: ... } in the gateway config.",
    );
  }
  const active = (status: string) => status === "running" || status === "pending";
  const plan = await runEvents.prepareJoin(runId, afterSeq, active(record.status));
  if (plan.kind === "caught-up") return plan;
  const items = runEvents.joinFrames(
    runId,
    afterSeq,
    async () => active((await client.getRun(threadId, runId, { userId })).status),
    request.signal,
    { threadMessages: async () => (await client.getThread(threadId, { userId })).messages, full: request.full },
  );
  return { kind: "stream", traceId: record.trace_id, items };
}

/** `followRun` for contributed routes: the same plan, each event parsed, `values` whole. */
export async function followedEvents(
  deps: { client: AntlerClient; runEvents: RunEventLog | null },
  userId: string,
  threadId: string,
  runId: string,
  options: { afterSeq: number; signal: AbortSignal },
): Promise<AsyncGenerator<FollowedRunEvent> | null> {
  if (!Number.isSafeInteger(options.afterSeq) || options.afterSeq < 0) {
    throw new HttpError(
      400,
      GatewayErrorCodes.INVALID_REQUEST,
      `${options.afterSeq} is not an event id of a run stream`,
      "Send the seq of the last event received (a whole number), or 0.",
    );
  }
  const plan = await followRun(deps, { userId, threadId, runId, afterSeq: options.afterSeq, full: true, signal: options.signal });
  if (plan.kind === "caught-up") return null;
  const { items } = plan;
  return (async function* () {
    for await (const event of items) yield { seq: event.seq, event: event.event, data: JSON.parse(event.json) as unknown };
  })();
}
