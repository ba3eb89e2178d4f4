// What a person does to a thread besides running it: rename it, and branch it before one of its messages (to edit
// that message and ask again, or regenerate an answer) with the original left as it was.
import type { AntlerClient } from "@antler/plugin-runtime";
import type { Context, Hono } from "hono";
import { z } from "zod";
import type { GatewayEnv } from "./env.js";

/** `PATCH /api/threads/{id}`: the new title (null clears it). */
export const threadRenameSchema = z.strictObject({
  title: z.string().trim().min(1, "title: give a title, or null to clear it").max(200).nullable(),
});

/** `POST /api/threads/{id}/branch`: the message the branch ends before, and optionally the new thread's id and title. */
export const threadBranchSchema = z.strictObject({
  message_id: z.string().min(1).max(200),
  thread_id: z.string().min(1).max(128).optional(),
  title: z.string().trim().min(1).max(200).nullable().optional(),
});

export function mountThreadActionRoutes(
  app: Hono<GatewayEnv>,
  deps: {
    client: AntlerClient;
    user(c: Context<GatewayEnv>): string;
    readJson<S extends z.ZodType>(c: Context<GatewayEnv>, schema: S): Promise<z.output<S>>;
  },
): void {
  const { client, user, readJson } = deps;
  app.patch("/api/threads/:id", async (c) => {
    const body = await readJson(c, threadRenameSchema);
    return c.json(await client.renameThread(c.req.param("id"), { userId: user(c), title: body.title }));
  });
  app.post("/api/threads/:id/branch", async (c) => {
    const body = await readJson(c, threadBranchSchema);
    const record = await client.branchThread(c.req.param("id"), {
      userId: user(c),
      beforeMessageId: body.message_id,
      ...(body.thread_id !== undefined ? { newThreadId: body.thread_id } : {}),
      ...(body.title !== undefined ? { title: body.title } : {}),
    });
    return c.json(record, 201);
  });
}
