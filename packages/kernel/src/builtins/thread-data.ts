import { mkdir } from "node:fs/promises";
import { DEFAULT_USER_ID, threadPaths } from "../paths.js";
import type { HookRuntime, MiddlewareSpec } from "../pipeline/types.js";

/** The thread and user a hook runs for: run context first, then the checkpointer's thread id. */
export function runIdentity(runtime: Pick<HookRuntime, "context" | "configurable">): { userId: string; threadId: string | undefined } {
  const ctx = (runtime.context ?? {}) as { user_id?: string; thread_id?: string };
  const threadId = ctx.thread_id ?? (runtime.configurable?.thread_id as string | undefined);
  return { userId: ctx.user_id ?? DEFAULT_USER_ID, threadId };
}

/**
 * Creates the thread's `user-data/{workspace,uploads,outputs}` folders under `<baseDir>/users/<user>/threads/<thread>/`
 * before the agent runs, and records their host paths in `thread_data`.
 */
export function threadDataMiddleware(options: { baseDir: string }): MiddlewareSpec {
  return {
    name: "ThreadData",
    async beforeAgent(state, runtime) {
      const { userId, threadId } = runIdentity(runtime);
      if (!threadId) return undefined;
      const paths = threadPaths(options.baseDir, userId, threadId);
      await Promise.all([paths.workspace, paths.uploads, paths.outputs].map((dir) => mkdir(dir, { recursive: true })));
      const data = { workspace_path: paths.workspace, uploads_path: paths.uploads, outputs_path: paths.outputs };
      const current = state.thread_data as typeof data | undefined;
      if (
        current?.workspace_path === data.workspace_path &&
        current.outputs_path === data.outputs_path &&
        current.uploads_path === data.uploads_path
      ) {
        return undefined;
      }
      return { thread_data: data };
    },
  };
}
