import { mkdirSync } from "node:fs";
import { DEFAULT_USER_ID, type HookRuntime, type MiddlewareSpec, threadPaths } from "@antler/kernel";
import { Command } from "@langchain/langgraph";

/** The thread and user a hook runs for: run context first, then the checkpointer's thread id. */
export function runIdentity(runtime: Pick<HookRuntime, "context" | "configurable">): { userId: string; threadId: string | undefined } {
  const ctx = (runtime.context ?? {}) as { user_id?: string; thread_id?: string };
  const threadId = ctx.thread_id ?? (runtime.configurable?.thread_id as string | undefined);
  return { userId: ctx.user_id ?? DEFAULT_USER_ID, threadId };
}

interface ThreadData {
  workspace_path: string;
  uploads_path: string;
  outputs_path: string;
}

/**
 * Creates the thread's `user-data/{workspace,uploads,outputs}` folders under `<baseDir>/users/<user>/threads/<thread>/`
 * and records their host paths in `thread_data`. Wrap-style: it acts on the first model call of a thread (tools
 * only run after one) and costs nothing afterwards, instead of a `beforeAgent` graph step on every turn.
 */
export function threadDataMiddleware(options: { baseDir: string }): MiddlewareSpec {
  // Folders already created by this process; a thread's first turn pays for three mkdirs, later ones nothing,
  // even on agents without a checkpointer (where `thread_data` never persists).
  const ensured = new Set<string>();
  return {
    name: "ThreadData",
    async wrapModelCall(request, handler) {
      const { userId, threadId } = runIdentity(request.runtime);
      if (!threadId) return handler(request);
      const paths = threadPaths(options.baseDir, userId, threadId);
      const current = request.state.thread_data as ThreadData | undefined;
      if (current?.workspace_path === paths.workspace && current.uploads_path === paths.uploads && current.outputs_path === paths.outputs) {
        return handler(request);
      }
      if (!ensured.has(paths.userData)) {
        // Synchronous: three mkdirs once per thread are cheaper than three trips through libuv's four-thread
        // pool, which queue behind each other when hundreds of new threads start at once.
        for (const dir of [paths.workspace, paths.uploads, paths.outputs]) mkdirSync(dir, { recursive: true });
        if (ensured.size >= 10_000) ensured.clear();
        ensured.add(paths.userData);
      }
      await handler(request);
      const data: ThreadData = { workspace_path: paths.workspace, uploads_path: paths.uploads, outputs_path: paths.outputs };
      return new Command({ update: { thread_data: data } });
    },
  };
}
