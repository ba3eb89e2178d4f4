import { createToken, DEFAULT_USER_ID, definePlugin, emitCustomEvent, type Kernel } from "@antler/kernel";
import type { AntlerClient } from "@antler/plugin-runtime";
import { defineGatewayRoute, gatewayErrorReply, provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { z } from "zod";
import type { WorkspaceChanges } from "./changes.js";
import { WorkspaceRecorder } from "./recorder.js";
import { WorkspaceChangesStore, workspaceChangesMigrations } from "./store.js";

export const WORKSPACE_CHANGES_PLUGIN_NAME = "@antler/plugin-workspace-changes";
/** The custom stream event that carries a run's record. */
export const WORKSPACE_CHANGES_EVENT = "workspace_changes";
/** The code of a 404 from `GET /api/threads/{id}/runs/{run}/changes`: no changes recorded for that run (or not yours). */
export const WORKSPACE_CHANGES_NOT_FOUND = "ANTLER_ERR_WORKSPACE_CHANGES_NOT_FOUND";

export const workspaceChangesConfigSchema = z.strictObject({
  enabled: z.boolean().default(true).describe("Record what each run changed in the thread's workspace and outputs."),
  max_files: z.number().int().positive().default(5000).describe("Most files one scan reads; beyond it the record says it is truncated."),
  max_bytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024)
    .describe("Most bytes one scan reads."),
  max_scan_ms: z.number().int().positive().default(10_000).describe("Wall-clock budget of one scan."),
  text_cap_bytes: z
    .number()
    .int()
    .positive()
    .default(256 * 1024)
    .describe("Text files up to this size get diffs."),
  max_diff_bytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024)
    .describe("Total diff text kept in one run's record."),
});

interface WorkspaceChangesService {
  get(userId: string, threadId: string, runId: string): Promise<WorkspaceChanges | undefined>;
}

const WORKSPACE_CHANGES = createToken<WorkspaceChangesService>("workspace-changes.service");

/** A run's `workspace_changes` record, read through a client's kernel; undefined when none was recorded. */
export function getRunWorkspaceChanges(
  client: AntlerClient | { kernel: Kernel },
  threadId: string,
  runId: string,
  options: { userId?: string } = {},
): Promise<WorkspaceChanges | undefined> {
  return client.kernel.scope.resolve(WORKSPACE_CHANGES).get(options.userId ?? DEFAULT_USER_ID, threadId, runId);
}

/**
 * `@antler/plugin-workspace-changes`: captures the thread's workspace and outputs at run start (a worker-thread
 * scan with text copies), scans again when the agent finishes, and records the differences as the run's
 * `workspace_changes`: a custom stream event, a row next to the run record, `GET
 * /api/threads/{id}/runs/{run}/changes` and `getRunWorkspaceChanges`.
 */
export default definePlugin({
  name: WORKSPACE_CHANGES_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Records each run's workspace_changes (added, modified with diffs, deleted files) from worker-thread scans.",
  configSchema: workspaceChangesConfigSchema,
  setup(ctx) {
    const config = ctx.config;
    const recorder = new WorkspaceRecorder({
      baseDir: ctx.paths.baseDir,
      logger: ctx.logger,
      maxDiffBytes: config.max_diff_bytes,
      limits: { maxFiles: config.max_files, maxBytes: config.max_bytes, maxMs: config.max_scan_ms, textCapBytes: config.text_cap_bytes },
    });
    let store: Promise<WorkspaceChangesStore> | undefined;
    const openStore = () =>
      (store ??= ctx.storage.openDatabase({ migrations: workspaceChangesMigrations }).then((db) => new WorkspaceChangesStore(db)));
    ctx.provide(WORKSPACE_CHANGES, { useValue: { get: async (u, t, r) => (await openStore()).get(u, t, r) } });
    ctx.hooks.stop.tap(async () => {
      await (await store)?.close();
    });
    ctx.hooks.runStart.tap((run) => {
      if (config.enabled && run.threadId !== undefined)
        recorder.begin({ runId: run.runId, userId: run.userId ?? DEFAULT_USER_ID, threadId: run.threadId });
    });
    // A run that ends without reaching afterAgent (cancelled, failed) still has its capture cancelled properly.
    ctx.hooks.runEnd.tap(async (run) => {
      if (run.threadId !== undefined) await recorder.abandon(run.userId ?? DEFAULT_USER_ID, run.threadId);
    });
    ctx.middleware.add(
      {
        name: "WorkspaceChanges",
        create(assembly) {
          if (!config.enabled || assembly.subagent) return null;
          return {
            name: "WorkspaceChanges",
            // The capture runs in a worker; the agent starts once it is taken, so it sees the files before any tool.
            async beforeAgent(_state, runtime) {
              const context = (runtime.context ?? {}) as { thread_id?: unknown; user_id?: unknown };
              if (typeof context.thread_id !== "string") return undefined;
              await recorder.ready(typeof context.user_id === "string" ? context.user_id : DEFAULT_USER_ID, context.thread_id);
              return undefined;
            },
            async afterAgent(_state, runtime) {
              const context = (runtime.context ?? {}) as { thread_id?: unknown; user_id?: unknown };
              if (typeof context.thread_id !== "string") return undefined;
              const userId = typeof context.user_id === "string" ? context.user_id : DEFAULT_USER_ID;
              const changes = await recorder.finish(userId, context.thread_id);
              if (!changes) return undefined;
              await (await openStore()).save(userId, changes);
              await emitCustomEvent({ type: WORKSPACE_CHANGES_EVENT, ...changes });
              return undefined;
            },
          };
        },
      },
      { stage: "normal" },
    );
    provideGatewayRoutes(ctx, {
      routes: [
        defineGatewayRoute({
          method: "GET",
          path: "/threads/:thread_id/runs/:run_id/changes",
          summary: "What the run changed in the thread's workspace and outputs (added, modified with diffs, deleted).",
          async handler(req) {
            const changes = await getRunWorkspaceChanges(req.client, req.params.thread_id ?? "", req.params.run_id ?? "", {
              userId: req.userId,
            });
            if (!changes) {
              return gatewayErrorReply(404, {
                code: WORKSPACE_CHANGES_NOT_FOUND,
                message: `no workspace_changes recorded for run ${JSON.stringify(req.params.run_id)} in this thread`,
                hint: "Check the thread and run ids (GET /api/threads/{id}/runs). A run that failed or was cancelled, or ran before this plugin was loaded, records none.",
              });
            }
            return { body: changes };
          },
        }),
      ],
    });
  },
});
