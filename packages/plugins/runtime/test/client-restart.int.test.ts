import { describeWithPostgres, scriptedModelsPlugin, usePostgresSchema } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { AntlerClient } from "../src/client/client.js";
import { tempDir } from "./fixtures.js";

// A "restart" here is everything but the Node process: the client, the kernel, the checkpointer and the
// database are closed and rebuilt from the same config. (checkpoint-restart.int.test.ts also restarts the process.)
async function open(dir: string, storage: Record<string, unknown>, reply: string) {
  return AntlerClient.create({
    config: { models: [{ name: "m", provider: "scripted" }], storage, title: { enabled: false } },
    // Explicit ids: a scripted model numbers its replies per instance, and both instances talk on one thread.
    plugins: [
      scriptedModelsPlugin({
        m: (messages, i) => ({
          id: `${reply}-${i}`,
          text: `${reply} (I see ${messages.filter((x) => x.getType() === "human").length} user messages)`,
        }),
      }),
    ],
    cwd: dir,
    env: {},
    discover: false,
  });
}

const open_: AntlerClient[] = [];
afterEach(async () => {
  for (const c of open_.splice(0)) await c.close();
});

async function resumes(storage: Record<string, unknown>) {
  const dir = tempDir();
  const first = await open(dir, storage, "first");
  expect(await first.chat("remember the number 42", { threadId: "restart-me" })).toBe("first (I see 1 user messages)");
  await first.close();
  const second = await open(dir, storage, "second");
  open_.push(second);
  expect(await second.chat("what number?", { threadId: "restart-me" })).toBe("second (I see 2 user messages)");
  const thread = await second.getThread("restart-me");
  expect(thread.messages.map((m) => m.content)).toEqual([
    "remember the number 42",
    "first (I see 1 user messages)",
    "what number?",
    "second (I see 2 user messages)",
  ]);
  expect((await second.listThreads()).map((t) => t.thread_id)).toEqual(["restart-me"]);
}

describe("conversation resumes after a restart", () => {
  it("with the SQLite checkpointer (the default)", async () => {
    await resumes({ backend: "sqlite" });
  });
});

describeWithPostgres("conversation resumes after a restart on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { scope: "each" });
  it("with the PostgreSQL checkpointer and thread registry", async () => {
    await resumes({ backend: "postgres", postgres_url: url, postgres_schema: schema.name });
  });
});
