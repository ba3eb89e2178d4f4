import { AntlerError, isAntlerError, type Kernel } from "@antler/kernel";
import { RuntimeErrorCodes } from "@antler/plugin-runtime/errors";
import { defineGatewayRoute, type GatewayReply, type GatewayRequest, type GatewayRoute } from "@antler/plugin-runtime/routes";
import { z } from "zod";
import type { BatchClient } from "./client.js";
import { BatchErrorCodes } from "./errors.js";
import type { BatchService } from "./service.js";
import type { BatchRecord, BatchStatus, ExportedItem } from "./store.js";
import { batchTaskSchema } from "./validation.js";

/**
 * The HTTP body of `POST /api/batches`: the `batch_task` arguments plus the thread the items work in. The shape is
 * checked here (a mismatch is the gateway's 400 naming the field); the limits (empty, too many, duplicate keys,
 * unknown subagent type) are checked by `validateSubmission`, exactly as for the tool.
 */
export const batchSubmitBodySchema = z.strictObject({
  ...batchTaskSchema.shape,
  thread_id: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe("A thread of yours the items' subagents work in (their files land in its workspace). Default: a workspace per batch."),
});

export type BatchSubmitBody = z.output<typeof batchSubmitBodySchema>;

/** A batch as API users see it: snake_case, no owner (it is always the caller). */
export interface PublicBatchRecord {
  id: string;
  title: string;
  subagent_type: string;
  state: BatchRecord["state"];
  total_items: number;
  max_live_items: number | null;
  max_running_items: number | null;
  thread_id: string | null;
  trace_id: string;
  created_at: string;
  finished_at: string | null;
}

/** A batch with its item counts. */
export interface PublicBatchStatus extends PublicBatchRecord {
  done: number;
  counts: BatchStatus["counts"];
  /** Acceptance verdicts, separate from execution: a completed item may still be UNMET. */
  verdicts: BatchStatus["verdicts"];
}

export function publicBatchRecord(batch: BatchRecord): PublicBatchRecord {
  return {
    id: batch.id,
    title: batch.title,
    subagent_type: batch.subagentType,
    state: batch.state,
    total_items: batch.totalItems,
    max_live_items: batch.maxLiveItems,
    max_running_items: batch.maxRunningItems,
    thread_id: batch.threadId,
    trace_id: batch.traceId,
    created_at: batch.createdAt,
    finished_at: batch.finishedAt,
  };
}

export function publicBatchStatus(status: BatchStatus): PublicBatchStatus {
  return { ...publicBatchRecord(status), done: status.done, counts: status.counts, verdicts: status.verdicts };
}

// The gateway maps only kernel codes; the batch plugin's own codes are answered here. Anything else goes on to the
// gateway's handler (STATE_CONFLICT → 409, THREAD_NOT_FOUND → 404, PATH_UNSAFE → 400, the rest 500).
const STATUS_BY_CODE = new Map<string, number>([
  [BatchErrorCodes.NOT_FOUND, 404],
  [BatchErrorCodes.INVALID, 400],
  [BatchErrorCodes.NOT_STARTED, 503],
]);

async function answer(fn: () => Promise<GatewayReply>): Promise<GatewayReply> {
  try {
    return await fn();
  } catch (error) {
    const status = isAntlerError(error) ? STATUS_BY_CODE.get(error.code) : undefined;
    if (!isAntlerError(error) || status === undefined) throw error;
    const problems = Array.isArray(error.details.problems) ? (error.details.problems as string[]) : undefined;
    // A refused submission lists every problem, one per line; the body carries them joined and as a list.
    const headline = error.message.split("\n")[0] ?? error.message;
    const message = problems ? `${headline.replace(/:$/, "")}: ${problems.join("; ")}` : headline;
    return {
      status,
      body: {
        error: {
          code: error.code,
          message,
          ...(error.hint ? { hint: error.hint } : {}),
          ...(Object.keys(error.details).length ? { details: error.details } : {}),
        },
      },
    };
  }
}

/**
 * Streams the items as JSON Lines. The first item is read before the response starts, so an unknown or foreign
 * batch id is still a 404 (the export checks ownership on its first step).
 */
async function itemsResponse(client: BatchClient, batchId: string, signal: AbortSignal): Promise<Response> {
  const items: AsyncGenerator<ExportedItem> = client.export(batchId);
  const first = await items.next();
  const encoder = new TextEncoder();
  let pending: IteratorResult<ExportedItem> | undefined = first;
  const stop = () => void items.return(undefined).catch(() => undefined);
  signal.addEventListener("abort", stop, { once: true });
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = pending ?? (await items.next());
        pending = undefined;
        if (next.done) {
          signal.removeEventListener("abort", stop);
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(`${JSON.stringify(next.value)}\n`));
      } catch (error) {
        signal.removeEventListener("abort", stop);
        controller.error(error);
      }
    },
    cancel() {
      signal.removeEventListener("abort", stop);
      stop();
    },
  });
  return new Response(body, {
    status: 200,
    headers: { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" },
  });
}

/**
 * `/api/batches` routes, mounted by `@antler/plugin-gateway` behind its API-key auth. Every route acts as the
 * authenticated user: another user's batch id answers 404, exactly like an unknown one.
 */
export function batchRoutes(resolve: (kernel: Kernel) => BatchService): GatewayRoute[] {
  const service = (request: GatewayRequest) => resolve(request.client.kernel);
  const batches = (request: GatewayRequest, startWorker = false) => service(request).client(request.userId, { startWorker });
  const id = (request: GatewayRequest) => request.params.id ?? "";
  return [
    defineGatewayRoute({
      method: "POST",
      path: "/batches",
      summary:
        "Submit a batch: { title, subagent_type, items: [{ key, prompt, acceptance_criteria? }], max_live_items?, max_running_items?, thread_id? } (201).",
      body: batchSubmitBodySchema,
      handler: (request) =>
        answer(async () => {
          const { thread_id: threadId, ...submission } = request.body;
          // Another user's thread (or one that does not exist) is THREAD_NOT_FOUND: the gateway answers 404.
          if (threadId !== undefined) await request.client.getThreadRecord(threadId, { userId: request.userId });
          const client = await batches(request, true);
          // The API key's role is recorded with the batch: its items' subagents act with it, not with default_role.
          const batch = await client.submit(submission, { threadId, traceId: request.traceId, userRole: request.principal.role });
          const status = await client.status(batch.id);
          return {
            status: 201,
            body: publicBatchStatus(status),
            headers: { location: `/api/batches/${encodeURIComponent(batch.id)}` },
          };
        }),
    }),
    defineGatewayRoute({
      method: "GET",
      path: "/batches",
      summary: "Your batches, newest first (?limit=, default 50, at most 200), without item counts: GET one for those.",
      query: z.object({ limit: z.coerce.number().int().min(1).max(200).optional() }),
      handler: (request) =>
        answer(async () => ({
          body: { batches: (await (await batches(request)).list({ limit: request.query.limit ?? 50 })).map(publicBatchRecord) },
        })),
    }),
    defineGatewayRoute({
      method: "GET",
      path: "/batches/:id",
      summary: "A batch's status: counts by execution state, and acceptance verdicts as a separate tally.",
      handler: (request) => answer(async () => ({ body: publicBatchStatus(await (await batches(request)).status(id(request))) })),
    }),
    defineGatewayRoute({
      method: "POST",
      path: "/batches/:id/cancel",
      summary:
        "Cancel a batch: pending and running items become cancelled; finished items keep their results. 409 when it already completed.",
      handler: (request) =>
        answer(async () => {
          const client = await batches(request);
          // The store cancels only an active batch; a finished one comes back unchanged, so this never relabels a
          // completed batch. Cancelling a cancelled batch again is idempotent (200, nothing more stopped).
          const { batch, cancelledItems } = await client.cancel(id(request));
          if (batch.state === "completed") {
            throw new AntlerError(
              RuntimeErrorCodes.STATE_CONFLICT,
              `batch ${JSON.stringify(batch.id)} already completed; there is nothing to cancel`,
              {
                hint: "Read its results with GET /api/batches/{id}/items.",
                details: { batch_id: batch.id, state: batch.state },
              },
            );
          }
          return { body: { ...publicBatchStatus(await client.status(batch.id)), cancelled_items: cancelledItems } };
        }),
    }),
    defineGatewayRoute({
      method: "GET",
      path: "/batches/:id/items",
      summary: "A batch's items with their results, in submission order, as JSON Lines (application/x-ndjson).",
      handler: (request) => answer(async () => itemsResponse(await batches(request), id(request), request.signal)),
    }),
  ];
}
