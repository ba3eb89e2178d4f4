import { randomUUID } from "node:crypto";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { afterEach } from "vitest";
import { AntlerClient } from "../src/client/client.js";
import type { StorageConfigInput } from "./storage.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

/** A client whose model answers "reply to <prompt>" after `delayMs`; closed after the test. */
export async function echoClient(dir: string, storage: StorageConfigInput, delayMs: number): Promise<AntlerClient> {
  const client = await AntlerClient.create({
    config: { models: [{ name: "m", provider: "scripted" }], storage, title: { enabled: false }, logging: { level: "error" } },
    // Ids are unique across instances: two model instances write to one thread.
    plugins: [
      scriptedModelsPlugin({
        m: { respond: (messages) => ({ text: `reply to ${String(messages.at(-1)?.content)}`, delayMs, id: randomUUID() }) },
      }),
    ],
    cwd: dir,
    env: {},
    discover: false,
  });
  clients.push(client);
  await client.listThreads();
  return client;
}

export async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}
