import type { BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { BOB_KEY, startTestGateway } from "./fixtures.js";

type Message = { type: string; id: string; content: string };
type State = { title: string | null; metadata: Record<string, unknown>; messages: Message[] };

const lastHuman = (messages: BaseMessage[]) => String(messages.filter((m) => m.getType() === "human").at(-1)?.content ?? "");

async function threadWithTwoTurns() {
  const gw = await startTestGateway({ script: { respond: (messages) => ({ text: `answer to ${lastHuman(messages)}` }) } });
  const { thread_id: id } = (await (await gw.call("/api/threads", { method: "POST", json: {} })).json()) as { thread_id: string };
  const ask = (thread: string, text: string) => gw.call(`/api/threads/${thread}/runs/wait`, { method: "POST", json: { message: text } });
  expect((await ask(id, "first question")).status).toBe(200);
  expect((await ask(id, "second question")).status).toBe(200);
  const state = async (thread: string) => (await (await gw.call(`/api/threads/${thread}/state?messages_limit=all`)).json()) as State;
  return { gw, id, ask, state };
}

describe("POST /api/threads/{id}/branch", () => {
  it("makes a new thread holding the messages before the named one; both branches stay readable as they go on", async () => {
    const { gw, id, ask, state } = await threadWithTwoTurns();
    const before = await state(id);
    expect(before.messages.map((m) => m.content)).toEqual([
      "first question",
      "answer to first question",
      "second question",
      "answer to second question",
    ]);
    const second = before.messages[2] as Message;

    const response = await gw.call(`/api/threads/${id}/branch`, { method: "POST", json: { message_id: second.id } });
    expect(response.status).toBe(201);
    const branch = (await response.json()) as { thread_id: string; branch_at: number; metadata: Record<string, unknown> };
    expect(branch.thread_id).not.toBe(id);
    expect(branch.branch_at).toBe(2);
    expect(branch.metadata).toMatchObject({ branch_of: id, branch_message_id: second.id });
    expect((await state(branch.thread_id)).messages.map((m) => m.content)).toEqual(["first question", "answer to first question"]);

    // The edited question goes to the branch; the original keeps its own second turn.
    expect((await ask(branch.thread_id, "second question, edited")).status).toBe(200);
    expect((await state(branch.thread_id)).messages.map((m) => m.content)).toEqual([
      "first question",
      "answer to first question",
      "second question, edited",
      "answer to second question, edited",
    ]);
    expect((await state(id)).messages.map((m) => m.content)).toEqual(before.messages.map((m) => m.content));
  });

  it("answers 404 for a message the thread does not hold and for another user's thread, and 400 for a bad body", async () => {
    const { gw, id, state } = await threadWithTwoTurns();
    const unknown = await gw.call(`/api/threads/${id}/branch`, { method: "POST", json: { message_id: "no-such-message" } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_MESSAGE_NOT_FOUND");
    const first = (await state(id)).messages[0] as Message;
    const bob = await gw.call(`/api/threads/${id}/branch`, { method: "POST", key: BOB_KEY, json: { message_id: first.id } });
    expect(bob.status).toBe(404);
    const bad = await gw.call(`/api/threads/${id}/branch`, { method: "POST", json: { message: first.id } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain("message_id");
  });
});

describe("PATCH /api/threads/{id}", () => {
  it("renames the thread (the list and the state show it), clears it with null, and refuses an empty title", async () => {
    const { gw, id } = await threadWithTwoTurns();
    const renamed = await gw.call(`/api/threads/${id}`, { method: "PATCH", json: { title: "Trip to Lisbon" } });
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({ thread_id: id, title: "Trip to Lisbon" });
    const listed = (await (await gw.call("/api/threads")).json()) as { threads: Array<{ thread_id: string; title: string | null }> };
    expect(listed.threads.find((t) => t.thread_id === id)?.title).toBe("Trip to Lisbon");
    expect(((await (await gw.call(`/api/threads/${id}/state`)).json()) as State).title).toBe("Trip to Lisbon");

    const empty = await gw.call(`/api/threads/${id}`, { method: "PATCH", json: { title: "  " } });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { error: { message: string } }).error.message).toContain("title");
    expect((await (await gw.call(`/api/threads/${id}`, { method: "PATCH", json: { title: null } })).json()) as State).toMatchObject({
      title: null,
    });
    expect((await gw.call(`/api/threads/${id}`, { method: "PATCH", key: BOB_KEY, json: { title: "mine" } })).status).toBe(404);
  });
});
