import { DEFAULT_USER_ID, type HookRuntime, type MiddlewareSpec } from "@antler/kernel";

/** The thread and user a hook runs for: run context first, then the checkpointer's thread id. */
export function runIdentity(runtime: Pick<HookRuntime, "context" | "configurable">): { userId: string; threadId: string | undefined } {
  const ctx = (runtime.context ?? {}) as { user_id?: string; thread_id?: string };
  const threadId = ctx.thread_id ?? (runtime.configurable?.thread_id as string | undefined);
  return { userId: ctx.user_id ?? DEFAULT_USER_ID, threadId };
}

/**
 * The ThreadData slot of the chain. A thread's folders are `threadPaths(baseDir, user, thread)`
 * (`<baseDir>/users/<user>/threads/<thread>/user-data/{workspace,uploads,outputs}`): derivable from the run's
 * identity, so they are neither created up front nor copied into the checkpoint. As DeerFlow's `lazy_init`
 * does, each folder is made by whatever first writes into it (a sandbox, an upload, an output sync), and a run
 * that writes nothing leaves no folder behind. The entry stays in the chain as the anchor that `requires:
 * ["ThreadData"]` and `before`/`after: "ThreadData"` placements name; it adds no hook and costs nothing per turn.
 */
export function threadDataMiddleware(_options: { baseDir: string }): MiddlewareSpec {
  return { name: "ThreadData" };
}
