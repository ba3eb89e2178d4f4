import { ErrorCodes, isAntlerError, type Kernel, type Logger } from "@antler/kernel";
import { defineGatewayRoute, type GatewayReply, type GatewayRequest, type GatewayRoute } from "@antler/plugin-runtime/routes";
import { z } from "zod";
import { taskInputSchema } from "./config.js";
import { SchedulerErrorCodes } from "./errors.js";
import type { ScheduledTaskView, Scheduler } from "./scheduler.js";
import type { ScheduledRun } from "./store.js";

/** Codes that mean "the request was wrong" (400) or "no such task for this user" (404). */
const BAD_REQUEST = new Set<string>([
  SchedulerErrorCodes.INVALID,
  ErrorCodes.CONTEXT_FORBIDDEN_KEY,
  ErrorCodes.MODEL_NOT_FOUND,
  ErrorCodes.PATH_UNSAFE,
]);
const NOT_FOUND = new Set<string>([SchedulerErrorCodes.NOT_FOUND]);

async function answer(fn: () => Promise<GatewayReply>): Promise<GatewayReply> {
  try {
    return await fn();
  } catch (error) {
    if (isAntlerError(error) && (BAD_REQUEST.has(error.code) || NOT_FOUND.has(error.code))) {
      return {
        status: NOT_FOUND.has(error.code) ? 404 : 400,
        body: {
          error: {
            code: error.code,
            message: error.message.split("\n  hint:")[0],
            ...(error.hint ? { hint: error.hint } : {}),
            ...(error.where ? { where: error.where } : {}),
          },
        },
      };
    }
    throw error;
  }
}

/** What API users see: no instance names (host names and pids of the deployment), only whether a run is live. */
export type PublicTask = Omit<ScheduledTaskView, "lease_owner" | "lease_expires_at"> & { running: boolean };
export type PublicRun = Omit<ScheduledRun, "instance_id">;

export function publicTask(task: ScheduledTaskView): PublicTask {
  const { lease_owner, lease_expires_at: _expires, ...rest } = task;
  return { ...rest, running: lease_owner !== null };
}

export function publicRun(run: ScheduledRun): PublicRun {
  const { instance_id: _instance, ...rest } = run;
  return rest;
}

const runsQuery = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) });

/**
 * `/api/scheduled-tasks` routes, mounted by `@antler/plugin-gateway` behind its API-key auth. Every route is scoped
 * to the authenticated user: another user's task id answers 404, exactly like a missing one.
 */
export function schedulerRoutes(resolve: (kernel: Kernel) => Scheduler, logger?: Logger): GatewayRoute[] {
  const scheduler = (request: GatewayRequest) => resolve(request.client.kernel);
  const id = (request: GatewayRequest) => request.params.id ?? "";
  return [
    defineGatewayRoute({
      method: "GET",
      path: "/scheduled-tasks",
      summary: "List your scheduled tasks.",
      handler: (request) => answer(async () => ({ body: { tasks: (await scheduler(request).list(request.userId)).map(publicTask) } })),
    }),
    defineGatewayRoute({
      method: "POST",
      path: "/scheduled-tasks",
      summary: "Add a scheduled task: { prompt, at | cron, timezone?, name?, thread?, thread_id?, model?, agent?, context?, paused? }.",
      body: taskInputSchema,
      handler: (request) =>
        answer(async () => ({
          status: 201,
          // The API key's role is recorded with the task: its occurrences act with it, not with default_role.
          body: publicTask(await scheduler(request).add(request.userId, request.body, { userRole: request.principal.role })),
        })),
    }),
    defineGatewayRoute({
      method: "GET",
      path: "/scheduled-tasks/:id",
      summary: "One scheduled task.",
      handler: (request) => answer(async () => ({ body: publicTask(await scheduler(request).get(request.userId, id(request))) })),
    }),
    defineGatewayRoute({
      method: "DELETE",
      path: "/scheduled-tasks/:id",
      summary: "Delete a scheduled task and its run history.",
      handler: (request) =>
        answer(async () => {
          await scheduler(request).remove(request.userId, id(request));
          return { status: 200, body: { id: id(request), deleted: true } };
        }),
    }),
    defineGatewayRoute({
      method: "POST",
      path: "/scheduled-tasks/:id/pause",
      summary: "Pause a scheduled task.",
      handler: (request) => answer(async () => ({ body: publicTask(await scheduler(request).pause(request.userId, id(request))) })),
    }),
    defineGatewayRoute({
      method: "POST",
      path: "/scheduled-tasks/:id/resume",
      summary: "Resume a paused scheduled task from now.",
      handler: (request) => answer(async () => ({ body: publicTask(await scheduler(request).resume(request.userId, id(request))) })),
    }),
    defineGatewayRoute({
      method: "POST",
      path: "/scheduled-tasks/:id/trigger",
      summary: "Run a scheduled task now, non-interactively, in the server (202 with the run; poll its runs).",
      handler: (request) =>
        answer(async () => {
          const { run, done } = await scheduler(request).trigger(request.userId, id(request));
          done.catch((err: unknown) => logger?.error({ err, run: run.id }, "triggered occurrence failed to record"));
          return { status: run.status === "skipped" ? 409 : 202, body: { run: publicRun(run) } };
        }),
    }),
    defineGatewayRoute({
      method: "GET",
      path: "/scheduled-tasks/:id/runs",
      summary: "A scheduled task's runs, newest first (status, attempt, trace id, thread).",
      query: runsQuery,
      handler: (request) =>
        answer(async () => ({
          body: { runs: (await scheduler(request).runs(request.userId, id(request), { limit: request.query.limit })).map(publicRun) },
        })),
    }),
  ];
}
