import type { Kernel } from "@antler/kernel";
import type { TaskNotifier } from "./service.js";

/**
 * Notification runs through the normal run path: one `AntlerClient.stream` turn on the task's thread, as the
 * internal principal acting for the task's owner, non-interactive (no `ask_clarification`), with the
 * notification's own trace id. The runtime is loaded on the first notification, never at plugin load.
 */
export function clientNotifier(kernel: () => Kernel): TaskNotifier {
  let client: Promise<import("@antler/plugin-runtime").AntlerClient> | undefined;
  return async (notification) => {
    client ??= import("@antler/plugin-runtime").then(({ AntlerClient }) => new AntlerClient({ kernel: kernel() }));
    const { INTERNAL_PRINCIPAL } = await import("@antler/plugin-runtime");
    let runId: string | null = null;
    for await (const event of (await client).stream(notification.prompt, {
      threadId: notification.threadId,
      userId: notification.userId,
      context: notification.context,
      principal: INTERNAL_PRINCIPAL,
      traceId: notification.traceId,
      // Someone may be chatting on the thread: wait behind their run rather than refuse or cut it off.
      multitaskStrategy: "enqueue",
    })) {
      if (event.type === "end") runId = event.data.run_id;
    }
    return { runId };
  };
}
