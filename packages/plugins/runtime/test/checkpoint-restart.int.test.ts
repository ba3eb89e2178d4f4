import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import type { BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { tempDir } from "./fixtures.js";
import { createCheckpointer, type StorageConfigInput } from "./storage.js";

const run = promisify(execFile);
const kernelDir = fileURLToPath(new URL("..", import.meta.url));
const fixture = fileURLToPath(new URL("./fixtures/checkpoint-turn.mjs", import.meta.url));

interface TurnReport {
  pid: number;
  modelSaw: number;
  count: number;
  messages: Array<{ type: string; content: unknown }>;
}

/** One turn in a fresh `node` process that exits when the turn is done (killed if it hangs). */
async function turnInChildProcess(args: string[]): Promise<TurnReport> {
  const { stdout } = await run(process.execPath, [fixture, ...args], { cwd: kernelDir, timeout: 60_000, killSignal: "SIGKILL" });
  const line = stdout.trim().split("\n").pop() ?? "";
  return JSON.parse(line) as TurnReport;
}

/**
 * Turn 1 runs in one process, which exits; turn 2 runs on the same thread in another. The second process
 * can only see turn 1 if it came back from the checkpointer's storage. Afterwards this process opens the
 * store through createCheckpointer and finds the whole conversation.
 */
async function expectConversationSurvivesRestart(
  storage: StorageConfigInput,
  options: { baseDir: string; schema?: string },
  childArgs: (location: { file: string }) => { target: string; extra: string[] },
): Promise<void> {
  // createCheckpointer lays out the store (SQLite file and folders, or PostgreSQL tables); the children use it.
  const setup = await createCheckpointer(storage, options);
  const { target, extra } = childArgs({ file: setup.location });
  await setup.close();
  const thread = `restart-${Date.now()}`;

  const first = await turnInChildProcess([setup.kind, target, thread, "my name is Ada", ...extra]);
  expect(first.modelSaw).toBe(1);
  expect(first.count).toBe(2);

  const second = await turnInChildProcess([setup.kind, target, thread, "what is my name?", ...extra]);
  expect(second.pid).not.toBe(first.pid);
  // The model in the second process saw turn 1 (human + AI) plus the new question.
  expect(second.modelSaw).toBe(3);
  expect(second.count).toBe(4);
  expect(second.messages.map((m) => m.type)).toEqual(["human", "ai", "human", "ai"]);
  expect(second.messages[0]?.content).toBe("my name is Ada");

  const reader = await createCheckpointer(storage, options);
  try {
    const tuple = await reader.saver.getTuple({ configurable: { thread_id: thread } });
    const messages = tuple?.checkpoint.channel_values.messages as BaseMessage[] | undefined;
    expect(messages?.map((m) => m.content)).toEqual(["my name is Ada", "reply 1", "what is my name?", "reply 3"]);
  } finally {
    await reader.close();
  }
}

describe("checkpoint restart (SQLite)", () => {
  it("a conversation resumes in a new process after the first one exited", async () => {
    await expectConversationSurvivesRestart({ backend: "sqlite" }, { baseDir: tempDir() }, ({ file }) => ({ target: file, extra: [] }));
  });
});

describeWithPostgres("checkpoint restart (PostgreSQL)", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_restart" });
  it("a conversation resumes in a new process after the first one exited", async () => {
    await expectConversationSurvivesRestart(
      { backend: "postgres", postgres_url: url },
      { baseDir: tempDir(), schema: schema.name },
      () => ({ target: url, extra: [schema.name] }),
    );
  });
});
